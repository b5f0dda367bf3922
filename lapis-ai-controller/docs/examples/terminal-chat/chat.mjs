// A terminal chat on the controller's public SDK: the example of a real
// integration. It imports `lapis-ai-controller/client` from the packed
// tarball installed into this folder (never from the checkout's src/).
//
//   LAPIS_AI_CONTROLLER_URL=ws://127.0.0.1:PORT node chat.mjs [--executor native|acp]
//
// `--executor` starts new threads on the demo config's `codex-native`
// (Codex over `codex app-server`) or `codex-acp` (through codex-acp);
// without it they use PROVIDER (default `codex`). Typing while an answer
// streams is kept off the screen and shown again once the answer ends.
//
// The owner token comes from `lapis-ai-controller token show`. Threads this
// app started are remembered in CHAT_STATE (default ./chat-state.json), so
// `/resume N` works after a restart too; `/threads` lists this application's
// threads from the controller, `/delete N` erases one, `/usage` prints tokens. Memory (memory.mjs): `/remember TEXT`,
// `/memory`, `/forget ID`, kept as Markdown files in CHAT_MEMORY (default
// chat-memory/ beside the state); every thread recalls from it. `/fork [K]` branches the
// thread after its K-th completed turn, `/rollback [N]` takes back the last N turns (the
// agent forgets them; files stay as they are). Typed SDK: client.threads.*,
// client.turns.* (with wait), client.interactions.*, client.events(threadId).
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { ControllerClient } from "lapis-ai-controller/client";
import { chatMemory } from "./memory.mjs";
import { forkPoints, noticeFilter, providerFor, typingHold } from "./present.mjs";
import { chatThreads } from "./threads.mjs";

const env = process.env;
const STATE = env.CHAT_STATE ?? "chat-state.json";
const WORKSPACE = env.WORKSPACE ?? "main";
// `--executor native|acp`: the demo config's provider of that executor for new threads.
const picked = providerFor(process.argv.slice(2), env);
if (picked.usage !== undefined) {
  process.stderr.write(`${picked.usage}\n`);
  process.exit(2);
}
const PROVIDER = picked.provider;
const APPROVAL = env.APPROVAL_POLICY ?? "ask";
const CLI = env.LAPIS_AI_CONTROLLER_CLI ?? "lapis-ai-controller";
const TERMINAL = ["completed", "failed", "cancelled", "interrupted", "submission_unknown"];
const resolveHint = (id) => `lapis-ai-controller turns resolve ${id} --as failed|cancelled --confirm-external-stopped`;
/** What each terminal state means and what to do about it. */
const MEANING = {
  completed: () => "",
  cancelled: () => "the agent confirmed it stopped.",
  failed: (t) => `the turn ended with an error (${t.errorCode ?? "unknown"}); send it again, or run \`lapis-ai-controller doctor\`.`,
  interrupted: (t) => `the agent's stop was never confirmed (${t.errorCode ?? "unknown"}); the workspace stays fenced. Once the agent has stopped: ${resolveHint(t.turnId)}`,
  submission_unknown: (t) => `the controller stopped while handing this turn to the agent, so nobody knows whether it ran. Check the workspace, then record it: ${resolveHint(t.turnId)}`,
};

const state = existsSync(STATE) ? JSON.parse(readFileSync(STATE, "utf8")) : { threads: [], last: null };
const save = () => writeFileSync(STATE, `${JSON.stringify(state, null, 2)}\n`);
const say = (line) => process.stdout.write(`${line}\n`);
const memory = chatMemory(env.CHAT_MEMORY ?? join(dirname(resolve(STATE)), "chat-memory"), say);
let threads = null; // the thread commands, once connected

const token = execFileSync(CLI, ["token", "show"], { encoding: "utf8" }).trim();
const client = await ControllerClient.connect({ url: env.LAPIS_AI_CONTROLLER_URL ?? "ws://127.0.0.1:47631", credential: { type: "token", token } });
threads = chatThreads(client, say);

let threadId = null;
let turn = null; // { turnId, cancel: boolean }
let answer = null; // resolves the pending approval question with the next line
let textOpen = false;
// The agent's setup notices (Codex's "Model metadata … not found" on every turn) show once per thread per session.
const firstNotice = noticeFilter();

/** Shows one thread event as it arrives (subscription, no polling). */
function show({ event }) {
  if (turn === null || event.turnId !== turn.turnId) return;
  const payload = event.payload ?? {};
  if (event.kind === "text") {
    if (!textOpen) process.stdout.write("agent: ");
    textOpen = true;
    process.stdout.write(payload.text ?? "");
    return;
  }
  if (event.kind === "message_completed" || event.kind === "reasoning") return;
  endText();
  const envelope = payload.envelope ?? {};
  if (event.kind === "tool_begin") say(`· tool: ${envelope.title ?? envelope.command ?? event.metadata.kind ?? "call"}`);
  if (event.kind === "tool_end" && envelope.kind === "edit") say(`· changed: ${(envelope.locations ?? []).join(", ") || envelope.title}`);
  if (event.kind === "diagnostic" && firstNotice(threadId, event.metadata.severity, payload.text ?? "")) say(`· notice (${event.metadata.severity}): ${payload.text ?? ""}`);
  if (event.kind === "interaction_requested") {
    turn.asks.push(event.metadata.interactionId);
    turn.wake();
  }
}

function endText() {
  if (textOpen) process.stdout.write("\n");
  textOpen = false;
}

let stream = null; // the open thread's event stream (subscription)

async function open(id, fresh) {
  await stream?.close();
  threadId = id;
  if (!fresh) await client.threads.attach(id);
  // The thread's memory endpoint: recall from the chat's memory folder (re-registered by the SDK after a reconnect).
  await memory.attach(client, id);
  stream = client.events(id);
  void (async (events) => {
    for await (const delivery of events) show(delivery);
  })(stream).catch((e) => say(`· events ended: ${e.code ?? e.message}`));
  state.last = id;
  save();
  say(`${fresh ? "new" : "resumed"} thread ${state.threads.indexOf(id) + 1} (${id})`);
}

async function newThread() {
  const { threadId: id } = await client.threads.create({ workspace: WORKSPACE, provider: PROVIDER, config: { approvalPolicy: APPROVAL } });
  state.threads.push(id);
  await open(id, true);
}

/** Asks about one approval in the terminal: y, n, or a (allow for this session) where offered. */
async function approve(turnId, ask) {
  endText();
  const ids = ask.optionIds;
  const session = ids.find((id) => /session/.test(id));
  const once = ids.find((id) => /^allow_once$|approved$/.test(id)) ?? ids.find((id) => /^(allow|approve|accept)/.test(id) && !/session|amendment/.test(id));
  const deny = ids.find((id) => /decline|reject|deny|denied|abort/.test(id)) ?? ids.find((id) => /cancel/.test(id));
  say(`? the agent asks to run a ${ask.category} step. Allow? [y]es / [n]o${session ? " / [a]lways this session" : ""}`);
  // The answer is typed now: show it; the answer's own streaming hides typing again.
  typing?.release();
  const reply = (await new Promise((resolve) => (answer = resolve))).trim().toLowerCase();
  typing?.hold();
  const optionId = reply === "a" && session ? session : reply === "y" ? once : deny;
  if (optionId === undefined) await client.interactions.cancel(turnId, ask.interactionId);
  else await client.interactions.respond(turnId, ask.interactionId, optionId);
  say(`· ${optionId !== undefined && (optionId === once || optionId === session) ? "allowed" : "denied"}`);
}

/**
 * Runs one turn: text streams through `show`, the outcome comes from
 * `turns.wait` (woken by the turn's outcome event), and each
 * `interaction_requested` event asks a question (its options from turns.get).
 */
async function runTurn(text) {
  let wake = () => {};
  const { turnId } = await client.turns.submit(threadId, { text });
  turn = { turnId, cancel: false, asks: [], wake: () => wake() };
  // While the answer streams, typed keys are kept but not echoed into it.
  typing?.hold();
  let settled = null;
  const outcome = client.turns.wait(turnId, { timeoutMs: 3_600_000 }).then((t) => (settled = t));
  while (settled === null) {
    const asked = turn.asks.shift();
    if (asked !== undefined) {
      const ask = (await client.turns.get(turnId)).interactions.find((i) => i.interactionId === asked && i.state === "pending");
      if (ask !== undefined) await approve(turnId, ask);
      continue;
    }
    await Promise.race([outcome, new Promise((r) => (wake = r))]);
  }
  const view = await outcome;
  endText();
  turn = null;
  for (const line of queued.splice(0)) say(`· queued: ${line}`);
  const meaning = MEANING[view.state]?.(view) ?? "";
  const used = memory.usedLine(view);
  if (used !== null) say(used);
  say(`[${view.state}]${meaning ? ` ${meaning}` : ""}`);
  typing?.release();
}

async function command(line) {
  const [name, arg] = line.split(/\s+/);
  if (name === "/new") return newThread();
  if (name === "/remember") return memory.remember(line.slice(name.length).trim(), threadId);
  if (name === "/memory") return memory.list();
  if (name === "/forget") return memory.forget(arg);
  // This application's threads from the controller (threads.list): title or first words, activity, turns.
  if (name === "/threads") return void (await threads.list(threadId, state.threads));
  // History controls: /fork [K] branches after completed turn K (default: the last), /rollback [N] takes back the last N.
  if (name === "/fork") {
    const points = forkPoints(await client.threads.replayAll(threadId));
    const afterTurnId = points[(arg === undefined ? points.length : Number(arg)) - 1];
    if (afterTurnId === undefined) return say(`no completed turn ${arg ?? ""} to fork after (this thread has ${points.length})`);
    const { threadId: id } = await client.threads.fork({ threadId, afterTurnId });
    state.threads.push(id);
    return open(id, true);
  }
  if (name === "/rollback") {
    const { turns } = await client.threads.rollback({ threadId, turns: arg === undefined ? 1 : Number(arg) });
    return say(`· the agent no longer remembers the last ${turns} turn(s); files it changed stay as they are`);
  }
  if (name === "/resume") {
    const id = (threads.listed.length > 0 ? threads.listed : state.threads)[Number(arg) - 1];
    return id === undefined ? say("no such thread; see /threads") : open(id, false);
  }
  if (name === "/delete") {
    if (threads.listed.length === 0) await threads.list(threadId, state.threads);
    const gone = await threads.remove(arg);
    if (gone === null) return;
    state.threads = state.threads.filter((id) => id !== gone);
    save();
    // Deleting the open thread starts a new one.
    if (gone === threadId) return newThread();
    return;
  }
  if (name === "/usage") return threads.usage(threadId);
  say("commands: /new, /threads, /resume N, /fork [K], /rollback [N], /delete N, /usage, /remember TEXT, /memory, /forget ID, /quit");
}

const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: process.stdin.isTTY === true });
// Only a terminal echoes keys; piped input has nothing to hold.
const typing = process.stdin.isTTY === true ? typingHold(rl) : null;
/** Lines sent while a turn streamed, shown once it ends (they run after it, in order). */
const queued = [];
let busy = Promise.resolve();
function quit() {
  client.close();
  rl.close();
  process.exit(0);
}
// Ctrl-C cancels a running turn (the outcome shows when the agent confirms); when idle it quits.
process.on("SIGINT", () => {
  if (turn === null) return quit();
  if (turn.cancel) return;
  turn.cancel = true;
  endText();
  say("· cancelling…");
  client.turns.cancel(turn.turnId).catch((e) => say(`· cancel failed: ${e.code ?? e.message}`));
});
rl.on("SIGINT", () => process.emit("SIGINT"));
// Ctrl-D: a running turn is cancelled first, then the app quits.
rl.on("close", () => {
  if (turn !== null) process.emit("SIGINT");
  void busy.then(quit);
});
rl.on("line", (input) => {
  if (answer !== null) { const a = answer; answer = null; return a(input); }
  const line = input.trim();
  if (typing?.held === true && line.length > 0) queued.push(line);
  busy = busy.then(async () => {
    if (line === "/quit") quit();
    else if (line.startsWith("/")) await command(line);
    else if (line.length > 0) await runTurn(line);
  }).catch((e) => say(`error: ${e.code ?? e.message}`)).then(() => rl.prompt());
});

say("lapis-ai-controller terminal chat. Type a message; /new, /threads, /resume N, /fork [K], /rollback [N], /delete N, /usage, /remember TEXT, /memory, /forget ID, /quit; Ctrl-C cancels a turn.");
rl.setPrompt("> ");
busy = (state.last !== null && state.threads.includes(state.last) ? open(state.last, false) : newThread())
  .catch((e) => say(`error: ${e.code ?? e.message}`)).then(() => rl.prompt());
