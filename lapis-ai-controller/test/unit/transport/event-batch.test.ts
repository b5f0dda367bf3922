// The events of one subscription page leave in one socket write (P-PRF-20):
// driven directly with a socket stand-in that counts writes, and on a real
// `ws` socket whose TCP stream is spied on.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { WebSocket, WebSocketServer } from "ws";
import { createAuthSessions } from "../../../src/auth/auth-sessions.ts";
import { EndpointRegistry } from "../../../src/domain/endpoint-registration.ts";
import { ThreadEventHub } from "../../../src/domain/event-hub.ts";
import { ThreadReservations } from "../../../src/domain/thread-reservations.ts";
import { authSessionStore } from "../../../src/persistence/auth-store.ts";
import { openSqliteStore } from "../../../src/persistence/sqlite-store.ts";
import type { RawSocket } from "../../../src/transport/connection.ts";
import { openConnection } from "../../../src/transport/connection.ts";
import type { ProtocolDeps } from "../../../src/transport/context.ts";
import { DISPATCH } from "../../../src/transport/dispatch.ts";
import { PROTOCOL } from "../../../src/transport/frames.ts";
import { transportLimits } from "../../../src/transport/options.ts";
import { corkable } from "../../../src/transport/ws-server.ts";
import { defaultCredentials, TestClock, TOKENS } from "../../support/protocol-harness.ts";
import { tempDir } from "../../support/temp.ts";

test("P-PRF-20 the events of one subscription page leave in one socket write; each send outside a page is its own", async (t) => {
  const opened = openSqliteStore({ path: join(tempDir(t), "c.sqlite") });
  assert.ok(opened.ok);
  const store = opened.value;
  t.after(() => store.close());
  const clock = new TestClock();
  const limits = transportLimits({ port: 0 });
  assert.ok(limits.ok);
  let n = 0;
  const deps: ProtocolDeps = {
    store,
    auth: createAuthSessions({ store: authSessionStore(store.handle), credentials: defaultCredentials(), clock, ttlMs: 60_000, newId: () => `as-${++n}` }),
    turns: null,
    endpoints: new EndpointRegistry(8),
    reservations: new ThreadReservations(8, 60_000),
    hub: new ThreadEventHub(),
    clock,
    newId: () => `id-${++n}`,
    limits: limits.value,
    known: { workspaces: null, providers: null },
    log: () => {},
  };
  // A write is what reaches the stream at once: a send outside cork/uncork, or every send between them.
  const writes: Record<string, any>[][] = [];
  let held: Record<string, any>[] | null = null;
  const socket: RawSocket = {
    bufferedAmount: 0,
    send: (text) => { if (held === null) writes.push([JSON.parse(text)]); else held.push(JSON.parse(text)); },
    close: () => {},
    cork: () => { held = []; },
    uncork: () => { if (held !== null && held.length > 0) writes.push(held); held = null; },
  };
  const handle = openConnection({ deps, table: DISPATCH, closeSession: () => {}, forget: () => {} }, socket, "c1");
  t.after(() => handle.closed());
  const request = async (id: string, method: string, params: Record<string, unknown>) => {
    const text = JSON.stringify({ jsonrpc: "2.0", id, method, params });
    handle.message(text, text.length, false);
    for (let i = 0; i < 20 && !writes.flat().some((f) => f.id === id); i++) await new Promise((r) => setImmediate(r));
    return writes.flat().find((f) => f.id === id) as Record<string, any>;
  };
  assert.ok((await request("h", "hello", { protocol: PROTOCOL, credential: { type: "token", token: TOKENS.appA } })).result);
  const { threadId } = (await request("c", "threads.create", { commandId: "c", workspace: "w", provider: "p" })).result;
  const sub = (await request("s", "threads.subscribe", { threadId })).result;
  const before = writes.length;
  // One commit's worth of events (as a turn's end commits its last events with the outcome), one notice.
  for (let i = 0; i < 3; i++) store.journal.append({ threadId, turnId: null, visibility: "transcript", kind: "activity", createdAt: 0 });
  deps.hub.published(threadId, 4);
  await new Promise((r) => setImmediate(r));
  const after = writes.slice(before);
  assert.equal(after.length, 1, "three events of one page: one write");
  assert.deepEqual(after[0]?.map((f) => [f.method, f.params.subscriptionId, f.params.seq]), [
    ["event", sub.subscriptionId, 2], ["event", sub.subscriptionId, 3], ["event", sub.subscriptionId, 4],
  ]);
  // A reply is still a write of its own, sent at once.
  const replies = writes.length;
  await request("g", "threads.snapshot", { threadId });
  assert.deepEqual(writes.slice(replies).map((w) => w.length), [1]);
});

test("P-PRF-20 a real ws socket corked by the connection hands its frames to the TCP stream in one writev, in order", async (t) => {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
  await new Promise<void>((r) => wss.once("listening", () => r()));
  const accepted = new Promise<WebSocket>((r) => wss.once("connection", (s: WebSocket) => r(s)));
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as { port: number }).port}`, { perMessageDeflate: false });
  const server = await accepted;
  t.after(async () => {
    client.terminate();
    server.terminate();
    await new Promise<void>((r) => wss.close(() => r()));
  });
  const stream = (server as unknown as { _socket: { _writev: (...a: unknown[]) => unknown; _write: (...a: unknown[]) => unknown } })._socket;
  const calls: string[] = [];
  const writev = stream._writev.bind(stream), write = stream._write.bind(stream);
  stream._writev = (...a: unknown[]) => { calls.push(`writev:${(a[0] as unknown[]).length}`); return writev(...a); };
  stream._write = (...a: unknown[]) => { calls.push("write"); return write(...a); };
  const got: string[] = [];
  const all = new Promise<void>((r) => client.on("message", (d: Buffer) => { got.push(String(d)); if (got.length === 4) r(); }));
  const raw = corkable(server);
  raw.cork?.();
  for (const text of ["a", "b".repeat(2000), "c"]) raw.send(text);
  raw.uncork?.();
  assert.deepEqual(calls, ["writev:6"], "three frames (header and payload each) in one writev");
  raw.send("d");
  await all;
  assert.deepEqual(got, ["a", "b".repeat(2000), "c", "d"]);
  assert.equal(calls.length, 2, "a send outside cork/uncork writes on its own");
});
