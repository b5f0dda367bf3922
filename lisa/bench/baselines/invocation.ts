// Baseline of one invocation: the least a bot must do between a /sync
// response and its reply, with the same HTTP calls Lisa makes (node:http, one
// keep-alive Agent for Matrix and one for the LLM, as Lisa) and the same number of
// fsync'd SQLite commits (node:sqlite, WAL, synchronous=FULL):
//   /sync -> commit (store candidate + position) -> next /sync in parallel
//   PUT typing (not awaited, as Lisa) -> commit (lease) -> GET /context [-> GET /messages]
//   -> POST chat/completions -> commit (ready)
//   -> PUT send -> commit (sent) -> PUT typing false (as Lisa: typing stays on until the reply is sent)
// Usage: node bench/baselines/invocation.ts '<json BaselineInvocationOptions>'
import { rmSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { Agent, request } from "node:http";

/** What the bench tells the baseline. */
export interface BaselineInvocationOptions {
  readonly homeserverUrl: string;
  readonly userId: string;
  readonly password: string;
  readonly roomId: string;
  readonly llmUrl: string;
  readonly databasePath: string;
  /** `limit` of the `/context` call (Lisa: 2 * max_events + 1). */
  readonly contextLimit: number;
  /** Backwards `/messages` pages after `/context` (as many as Lisa made). */
  readonly messagesPages: number;
  /** Bytes of the chat-completions request body (Lisa's, measured). */
  readonly llmBodyBytes: number;
  /** Bytes of the reply content (Lisa's, measured). */
  readonly replyBytes: number;
}

const options = JSON.parse(process.argv[2] ?? "{}") as BaselineInvocationOptions;
const HEADERS = { "x-bench-client": "baseline", accept: "application/json" };
const matrixAgent = new Agent({ keepAlive: true, timeout: 30_000 });
const llmAgent = new Agent({ keepAlive: true, timeout: 30_000 });
const matrixOrigin = new URL(options.homeserverUrl).origin;
const llm = new URL(options.llmUrl);
let token = "";

async function call(agent: Agent, origin: string, method: "GET" | "POST" | "PUT", path: string, body?: string): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = { ...HEADERS };
  if (token !== "") headers["authorization"] = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  if (body !== undefined) headers["content-length"] = String(Buffer.byteLength(body));
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const outgoing = request(new URL(path, origin), { agent, method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
      response.on("error", reject);
    });
    outgoing.on("error", reject);
    outgoing.end(body);
  });
  if (status >= 300) throw new Error(`baseline: ${method} ${path.split("?")[0]} -> ${status}`);
  return JSON.parse(text) as Record<string, unknown>;
}

const matrix = (method: "GET" | "PUT" | "POST", path: string, body?: unknown): Promise<Record<string, unknown>> =>
  call(matrixAgent, matrixOrigin, method, `/_matrix/client/v3${path}`, body === undefined ? undefined : JSON.stringify(body));

rmSync(options.databasePath, { force: true });
const db = new DatabaseSync(options.databasePath);
db.exec("PRAGMA journal_mode = WAL");
db.exec("PRAGMA synchronous = FULL");
db.exec(`CREATE TABLE IF NOT EXISTS position(id INTEGER PRIMARY KEY, next_batch TEXT);
  CREATE TABLE IF NOT EXISTS invocations(event_id TEXT PRIMARY KEY, status TEXT, raw TEXT, response TEXT, sent TEXT)`);
const commit = (work: () => void): void => {
  db.exec("BEGIN IMMEDIATE");
  work();
  db.exec("COMMIT");
};
const insert = db.prepare("INSERT OR IGNORE INTO invocations(event_id, status, raw) VALUES (?, 'candidate', ?)");
const position = db.prepare("INSERT OR REPLACE INTO position(id, next_batch) VALUES (1, ?)");
const setStatus = db.prepare("UPDATE invocations SET status = ?, response = COALESCE(?, response), sent = COALESCE(?, sent) WHERE event_id = ?");

const room = encodeURIComponent(options.roomId);
const user = encodeURIComponent(options.userId);
const llmBody = JSON.stringify({ model: "test-model", messages: [{ role: "user", content: "x".repeat(Math.max(0, options.llmBodyBytes - 80)) }] });
const replyText = "y".repeat(Math.max(1, options.replyBytes - 40));
let txn = 0;

async function answer(event: { event_id: string }): Promise<void> {
  const id = encodeURIComponent(event.event_id);
  // Typing first: the typing figure's baseline is one commit (the sync batch) and one PUT.
  // As Lisa, the work does not wait for the advisory notification; the clear does.
  const typingOn = matrix("PUT", `/rooms/${room}/typing/${user}`, { typing: true, timeout: 30_000 });
  // Let the request reach the socket before the blocking commit, so the typing
  // figure's baseline stays one commit and one PUT.
  await new Promise<void>((resolve) => setImmediate(resolve));
  commit(() => setStatus.run("processing", null, null, event.event_id));
  const context = await matrix("GET", `/rooms/${room}/context/${id}?limit=${options.contextLimit}`);
  let from = typeof context["start"] === "string" ? context["start"] : null;
  for (let page = 0; page < options.messagesPages && from !== null; page += 1) {
    const messages = await matrix("GET", `/rooms/${room}/messages?dir=b&from=${encodeURIComponent(from)}&limit=${options.contextLimit}`);
    from = typeof messages["end"] === "string" ? messages["end"] : null;
  }
  const completion = await call(llmAgent, llm.origin, "POST", `${llm.pathname}/chat/completions`, llmBody);
  if (!Array.isArray(completion["choices"])) throw new Error("baseline: no choices");
  const content = { msgtype: "m.text", body: replyText, "m.relates_to": { "m.in_reply_to": { event_id: event.event_id } } };
  const payload = JSON.stringify(content);
  commit(() => setStatus.run("ready", payload, null, event.event_id));
  txn += 1;
  const sent = await matrix("PUT", `/rooms/${room}/send/m.room.message/base_${process.pid}_${txn}`, content);
  commit(() => setStatus.run("sent", null, String(sent["event_id"]), event.event_id));
  await typingOn;
  await matrix("PUT", `/rooms/${room}/typing/${user}`, { typing: false });
}

// One worker, like one room's serial queue.
const queue: { event_id: string }[] = [];
let working = false;
async function drain(): Promise<void> {
  if (working) return;
  working = true;
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) await answer(next);
  working = false;
}

async function syncLoop(): Promise<void> {
  const login = await matrix("POST", "/login", { type: "m.login.password", identifier: { type: "m.id.user", user: options.userId }, password: options.password });
  token = String(login["access_token"]);
  const filter = encodeURIComponent(JSON.stringify({ room: { timeline: { limit: 100 } } }));
  let since = String((await matrix("GET", `/sync?timeout=0&filter=${filter}`))["next_batch"]);
  for (;;) {
    const response = await matrix("GET", `/sync?since=${encodeURIComponent(since)}&timeout=30000&filter=${filter}`);
    const rooms = response["rooms"] as { join?: Record<string, { timeline?: { events?: { event_id: string; type: string; sender: string }[] } }> } | undefined;
    const events = (rooms?.join?.[options.roomId]?.timeline?.events ?? []).filter((e) => e.type === "m.room.message" && e.sender !== options.userId);
    const next = String(response["next_batch"]);
    commit(() => {
      for (const event of events) insert.run(event.event_id, JSON.stringify(event));
      position.run(next);
    });
    since = next;
    queue.push(...events);
    void drain();
  }
}

process.on("SIGTERM", () => {
  db.close();
  process.exit(0);
});
await syncLoop();
