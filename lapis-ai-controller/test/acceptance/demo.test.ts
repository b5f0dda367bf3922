// Issue 27: `npm run demo` driven through stdin and stdout like a person,
// against the real llama-server + SmolLM2-135M through the real codex-acp and
// Codex: a prompt answered with model text that streams while the turn is
// still running, /new, a turn cancelled with Ctrl-C, /quit, a second run that
// resumes the last thread, and no process left behind. The approval round
// trip runs through the same terminal app with the scripted Responses-API
// model (SmolLM2 does not drive tools): approve writes the file, deny leaves
// none. First-run time, warm-start time and time to first streamed text are
// printed as diagnostics (measured, never asserted).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test, type TestContext } from "node:test";
import { ControllerClient } from "../../src/client.ts";
import { FAKE_KEY_ENV } from "../support/codex-home.ts";
import { processesOf, startDemo, type Demo } from "../support/demo-driver.ts";
import { PACKAGE } from "../support/installed-cli.ts";
import { startScriptedResponsesApi } from "../support/scripted-responses-api.ts";

const LLAMA_INSTALL = resolve(PACKAGE, "..", "scripts", "llama", "install.sh");
// Codex's own prompt is ~4,650 tokens: SmolLM2 on one loaded core reads it in minutes, not seconds.
const FIRST_TURN_MS = 600_000;
const TURN_MS = 300_000;
const STARTUP_MS = 900_000;

const dir = mkdtempSync(join(tmpdir(), "aic-demo-"));
const demoHome = join(dir, "home");
const measured: Record<string, number> = {};
let lastThread = "";
let firstThread = "";

test.after(() => {
  spawnSync("chmod", ["-R", "u+w", dir], { timeout: 30_000 });
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`# demo timings: ${JSON.stringify(measured)}\n`);
});

function token(): string {
  const r = spawnSync(join(demoHome, ".local", "bin", "lapis-ai-controller"), ["token", "show"], { env: { ...process.env, HOME: demoHome }, encoding: "utf8", timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

async function quitAndCheck(demo: Demo, afterCtrlC = false): Promise<void> {
  demo.type("/quit");
  const exit = await demo.exited;
  // A terminal's Ctrl-C reaches npm too: npm keeps running its script, then exits by that signal.
  if (afterCtrlC) assert.ok(exit === 0 || exit === "SIGINT", String(exit));
  else assert.equal(exit, 0, demo.err());
  assert.match(demo.out(), /stopped everything it started/);
  // Give the kernel a moment to reap; then nothing the demo started may be alive.
  for (let i = 0; i < 50 && processesOf(dir).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(processesOf(dir), [], "no process left behind");
}

async function turnOf(client: ControllerClient, threadId: string, text: string): Promise<string> {
  const events = await client.replayAll(threadId);
  const prompt = events.filter((e) => e.kind === "user_prompt" && (e.payload as { text?: string } | undefined)?.text === text).at(-1);
  assert.ok(prompt !== undefined, `the prompt ${text} is in the transcript`);
  return String(prompt.turnId);
}

test("AIC-DEMO-01 first run: npm run demo answers a prompt with streamed SmolLM2 text, /new, Ctrl-C cancels a turn, /quit stops everything", { timeout: 2 * STARTUP_MS }, async (t: TestContext) => {
  // The shared install (a no-op once cached; waits for a build in progress).
  const install = spawnSync("bash", [LLAMA_INSTALL], { encoding: "utf8", timeout: 45 * 60_000, stdio: ["ignore", "pipe", "inherit"] });
  assert.equal(install.status, 0, "scripts/llama/install.sh");
  const started = Date.now();
  // The user's own environment, with an npm cache that holds nothing: the chat app's install must not
  // need the registry after `npm ci` (every dependency of the SDK tarball is in this package's node_modules).
  const emptyCache = join(dir, "empty-npm-cache");
  mkdirSync(emptyCache);
  const demo = startDemo(t, dir, [], { npm_config_cache: emptyCache });
  await demo.waitFor(/installed the terminal chat/, STARTUP_MS);
  await demo.waitFor(/new thread 1 \(([0-9a-f-]{36})\)/, STARTUP_MS);
  await demo.waitFor(/^> /m, 60_000);
  measured.firstRunMs = Date.now() - started;
  const url = /serve ready at (ws:\/\/\S+)/.exec(demo.out())?.[1];
  assert.ok(url !== undefined);
  const threadId = /new thread 1 \(([0-9a-f-]{36})\)/.exec(demo.out())?.[1] as string;
  firstThread = threadId;
  const client = await ControllerClient.connect({ url, credential: { type: "token", token: token() } });
  t.after(() => client.close());

  // Long enough that the reply is still being written when its first words show.
  const prompt = "Write five sentences about the sea.";
  const submitted = Date.now();
  demo.type(prompt);
  await demo.waitFor(/agent: \S/, FIRST_TURN_MS);
  measured.firstTextMs = Date.now() - submitted;
  // Text streamed while the turn still ran: the turn is not over when its first words are on screen.
  const turnId = await turnOf(client, threadId, prompt);
  const during = (await client.call("turns.get", { turnId })) as { state: string };
  assert.ok(["running", "dispatched"].includes(during.state), `the turn was already ${during.state} when text first showed: ${demo.out().slice(-1500)}`);
  const done = await demo.waitFor(/\[(completed|failed|cancelled|interrupted)\]/, FIRST_TURN_MS);
  measured.firstTurnMs = Date.now() - submitted;
  assert.equal(done[1], "completed", demo.out().slice(-2000));
  const reply = /agent: ([^\n]*)/.exec(demo.out())?.[1]?.trim() ?? "";
  assert.ok(reply.length > 0, "non-empty model text");
  assert.doesNotMatch(reply, /Model metadata/, "Codex's notices are diagnostics, not reply text");
  const texts = (await client.replayAll(threadId)).filter((e) => e.kind === "text" && e.turnId === turnId);
  assert.ok(texts.length > 1, `the reply arrived in ${texts.length} streamed pieces`);

  demo.type("/new");
  await demo.waitFor(/new thread 2 \(([0-9a-f-]{36})\)/, 60_000);
  lastThread = /new thread 2 \(([0-9a-f-]{36})\)/.exec(demo.out())?.[1] as string;
  demo.type("Write a long story about a lighthouse keeper, at least four paragraphs.");
  await demo.waitFor(/agent: \S/, TURN_MS);
  demo.ctrlC();
  const cancelled = await demo.waitFor(/\[(completed|failed|cancelled|interrupted)\]/, TURN_MS);
  assert.equal(cancelled[1], "cancelled", demo.out().slice(-2000));
  client.close();
  await quitAndCheck(demo, true);
});

test("AIC-DEMO-02 AIC-DEMO-04 second run reuses installs, config, workspace and resumes the last thread; /threads lists them", { timeout: STARTUP_MS }, async (t: TestContext) => {
  assert.ok(lastThread !== "", "the first run left a thread");
  const started = Date.now();
  const demo = startDemo(t, dir);
  await demo.waitFor(new RegExp(`resumed thread 2 \\(${lastThread}\\)`), STARTUP_MS);
  await demo.waitFor(/^> /m, 60_000);
  measured.warmStartMs = Date.now() - started;
  assert.match(demo.out(), /reusing the CLI/);
  assert.match(demo.out(), /reusing the terminal chat/);
  assert.match(demo.out(), /llama-server installed or reused in/);
  assert.match(demo.err(), /reusing llama-server/, "the shared install script found its cache");
  // Each thread by its first words and last activity, the open one marked current.
  demo.type("/threads");
  await demo.waitFor(new RegExp(`  1  ${firstThread}  "Write five sentences about the sea\\."  · last active [^\\n]*\\n`), 30_000);
  await demo.waitFor(new RegExp(`\\* 2  ${lastThread}  "Write a long story about a lighthouse keeper, at…"  · last active [^\\n]*\\(current\\)`), 30_000);
  demo.type("/resume 1");
  await demo.waitFor(/resumed thread 1 /, 30_000);
  await quitAndCheck(demo);
});

test("AIC-DEMO-03 approvals asked in the terminal (scripted model via --model-url): approve writes the file, deny leaves none", { timeout: STARTUP_MS }, async (t: TestContext) => {
  const model = await startScriptedResponsesApi();
  t.after(() => model.close());
  const approved = join(dir, "workspace", "approved.txt");
  const denied = join(dir, "workspace", "denied.txt");
  const escalated = (file: string) => ({ call: { name: "exec_command", arguments: { cmd: `touch ${file}`, sandbox_permissions: "require_escalated", justification: "demo" } } });
  model.push(escalated(approved), { text: ["Created ", "it."] }, escalated(denied), { text: ["Not ", "created."] });
  const demo = startDemo(t, dir, ["--model-url", model.baseUrl, "--model", "scripted-model", "--model-key-env", FAKE_KEY_ENV], { [FAKE_KEY_ENV]: "scripted-not-a-secret" });
  await demo.waitFor(/resumed thread \d /, STARTUP_MS);
  await demo.waitFor(/^> /m, 60_000);

  demo.type("create the file");
  await demo.waitFor(/\? the agent asks to run/, TURN_MS);
  assert.equal(existsSync(approved), false, "nothing runs before the decision");
  demo.type("y");
  const first = await demo.waitFor(/\[(completed|failed|cancelled|interrupted)\]/, TURN_MS);
  assert.equal(first[1], "completed", demo.out().slice(-2000));
  assert.equal(existsSync(approved), true, "approve wrote the file");

  demo.type("create another file");
  await demo.waitFor(/\? the agent asks to run/, TURN_MS);
  demo.type("n");
  await demo.waitFor(/· denied/, 30_000);
  await demo.waitFor(/\[(completed|failed|cancelled|interrupted)\]/, TURN_MS);
  assert.equal(existsSync(denied), false, "deny left no file");
  await quitAndCheck(demo);
});
