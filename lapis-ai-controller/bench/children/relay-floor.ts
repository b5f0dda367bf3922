// The relay floor of the per-turn rows: the least a second process with a
// durable journal must do between an application and the agent, and nothing
// of the controller's code. Run under serve's runtime (Node or Deno) with the
// agent's environment as its own:
//
//   relay-floor.ts acp|native DATABASE WORKSPACE
//
// It drives the same agent the same way as the direct client of its row (it
// is that client: test/support/direct-acp-client.ts for codex-acp,
// test/support/direct-app-server-client.ts for `codex app-server`), serves
// one WebSocket client (`ws`, as serve's transport) and, per turn, does what
// the durable-before-acknowledged rule makes mandatory and no more:
//
// 1. `turns.submit`: the receipt (the turn, its command id, unique, by which
//    a client resolves a lost acknowledgement, and its prompt) committed,
//    then the acknowledgement (accepted work is recorded before it is
//    answered);
// 2. the dispatch boundary committed before the agent hears the prompt
//    (a crash after it leaves the turn "submission unknown", never re-run);
// 3. every agent notification journaled as it arrives, the rows of one
//    macrotask (at most GROUP_MAX) in one transaction, and sent to the
//    client only after their COMMIT (an event a client saw is on disk);
// 4. the outcome committed with the turn's last queued events in the same
//    transaction, then the events sent, then `turns.wait` answered.
//
// Every commit is a WAL `synchronous = FULL` transaction (node:sqlite), as
// the controller's store. No authentication (once per connection, not per
// turn), no scanner, no normalisation of events: those are the controller's
// design, or required by other rules, and stay in its gap over this floor.
// It prints one readiness line and exits on SIGTERM or when stdin closes,
// closing its agent first.
import type { AddressInfo } from "node:net";
import { DatabaseSync } from "node:sqlite";
import { setImmediate } from "node:timers";
import { type WebSocket, WebSocketServer } from "ws";
import { startDirectAgent } from "../../test/support/direct-acp-client.ts";
import { startDirectAppServer } from "../../test/support/direct-app-server-client.ts";

/** Events per transaction at most (serve's default `limits.storage.groupCommitMax`). */
const GROUP_MAX = 64;

const [executor, databasePath, workspace] = process.argv.slice(2);
if ((executor !== "acp" && executor !== "native") || databasePath === undefined || workspace === undefined) {
  throw new Error("usage: relay-floor.ts acp|native DATABASE WORKSPACE");
}

const db = new DatabaseSync(databasePath);
db.exec("PRAGMA journal_mode = WAL");
db.exec("PRAGMA synchronous = FULL");
db.exec(`CREATE TABLE IF NOT EXISTS turns (turn_id INTEGER PRIMARY KEY, command_id TEXT NOT NULL UNIQUE, prompt TEXT NOT NULL, state TEXT NOT NULL, updated_at INTEGER NOT NULL) STRICT;
  CREATE TABLE IF NOT EXISTS journal (seq INTEGER PRIMARY KEY, turn_id INTEGER REFERENCES turns (turn_id), payload TEXT NOT NULL, created_at INTEGER NOT NULL) STRICT`);
const insertTurn = db.prepare("INSERT INTO turns (turn_id, command_id, prompt, state, updated_at) VALUES (?, ?, ?, 'accepted', ?)");
const setState = db.prepare("UPDATE turns SET state = ?, updated_at = ? WHERE turn_id = ?");
const append = db.prepare("INSERT INTO journal (turn_id, payload, created_at) VALUES (?, ?, ?)");

/** Counts of this process's work, answered on `relay.stats`: commits, events journaled, ms spent in COMMIT (the event loop blocked on the disk). */
const stats = { commits: 0, events: 0, commitMs: 0 };

// The journal queue: agent events wait here for the next group commit; a
// frame leaves for the client only once its row is committed.
let queue: { turnId: number | null; payload: string }[] = [];
let scheduled = false;
let client: WebSocket | null = null;

/** Commits the queued events and then `work`'s writes in one transaction; sends the events' frames after the COMMIT. */
function transact(work: () => void = () => {}): void {
  const batch = queue;
  queue = [];
  const frames: string[] = [];
  db.exec("BEGIN IMMEDIATE");
  try {
    const at = Date.now();
    for (const item of batch) {
      const seq = Number(append.run(item.turnId, item.payload, at).lastInsertRowid);
      frames.push(`{"jsonrpc":"2.0","method":"event","params":{"turnId":${item.turnId},"seq":${seq},"event":${item.payload}}}`);
    }
    work();
    const t0 = performance.now();
    db.exec("COMMIT");
    stats.commitMs += performance.now() - t0;
  } catch (error) {
    db.exec("ROLLBACK");
    throw error;
  }
  stats.commits += 1;
  stats.events += batch.length;
  for (const frame of frames) client?.send(frame);
}

/** Queues one agent event (of no turn when `turnId` is null: the session's own notices) for the next group commit (the next macrotask, or now when the batch is full). */
function journal(turnId: number | null, event: unknown): void {
  queue.push({ turnId, payload: JSON.stringify(event) });
  if (queue.length >= GROUP_MAX) transact();
  else if (!scheduled) {
    scheduled = true;
    setImmediate(() => { scheduled = false; if (queue.length > 0) transact(); });
  }
}

let current: number | null = null;
const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => typeof e[1] === "string"));
const agent = executor === "acp"
  ? await (async () => {
    // Each update parsed once by the SDK's session router, as in serve (P-PRF-06); the baseline client parses it twice.
    const a = await startDirectAgent({ env, cwd: workspace, modeId: "read-only", parseOnce: true, onUpdate: (params) => journal(current, params) });
    return { run: async (text: string) => ((await a.prompt(text)).stopReason === "end_turn" ? "completed" : "failed"), close: () => a.close() };
  })()
  : await (async () => {
    const a = await startDirectAppServer({ env, cwd: workspace, onNotification: (method, params) => journal(current, { method, params }) });
    return { run: async (text: string) => ((await a.turn(text)).status === "completed" ? "completed" : "failed"), close: () => a.close() };
  })();

const outcomes = new Map<number, string>();
const waiters = new Map<number, (state: string) => void>();

/** One turn after its receipt: the dispatch boundary, the agent, the outcome with the last events, then the answer. */
async function runTurn(turnId: number, text: string): Promise<void> {
  transact(() => setState.run("dispatched", Date.now(), turnId));
  current = turnId;
  let state = "failed";
  try {
    state = await agent.run(text);
  } finally {
    transact(() => setState.run(state, Date.now(), turnId));
    outcomes.set(turnId, state);
    waiters.get(turnId)?.(state);
    waiters.delete(turnId);
  }
}

const reply = (socket: WebSocket, id: unknown, result: unknown) => socket.send(JSON.stringify({ jsonrpc: "2.0", id, result }));
let nextTurn = 0;

const server = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false, clientTracking: false });
server.on("connection", (socket) => {
  client = socket;
  socket.on("message", (data) => {
    const m = JSON.parse(String(data)) as { id: unknown; method: string; params: { commandId?: string; text?: string; turnId?: number } };
    if (m.method === "turns.submit") {
      const turnId = ++nextTurn;
      const text = String(m.params.text);
      transact(() => insertTurn.run(turnId, String(m.params.commandId), text, Date.now()));
      reply(socket, m.id, { turnId });
      void runTurn(turnId, text);
    } else if (m.method === "turns.wait") {
      const turnId = Number(m.params.turnId);
      const done = outcomes.get(turnId);
      if (done !== undefined) reply(socket, m.id, { turnId, state: done });
      else waiters.set(turnId, (state) => reply(socket, m.id, { turnId, state }));
    } else if (m.method === "relay.stats") {
      reply(socket, m.id, { ...stats });
    } else {
      socket.send(JSON.stringify({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "method not found" } }));
    }
  });
});

let closing = false;
async function shutdown(): Promise<void> {
  if (closing) return;
  closing = true;
  server.close();
  await agent.close();
  db.close();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown());
process.stdin.on("end", () => void shutdown());
process.stdin.resume();
server.on("listening", () => console.log(JSON.stringify({ ready: true, port: (server.address() as AddressInfo).port })));
