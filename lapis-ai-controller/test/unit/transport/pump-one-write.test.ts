// A subscription pump hands a page of events to the socket at once
// (transport/subscriptions.ts), and the `ws` adapter (transport/ws-raw.ts)
// writes those frames in one write of the TCP socket: the same frames, in
// order, one writev instead of one write per frame.
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { test } from "node:test";
import { WebSocket, WebSocketServer } from "ws";
import { createAuthSessions } from "../../../src/auth/auth-sessions.ts";
import { EndpointRegistry } from "../../../src/domain/endpoint-registration.ts";
import { ThreadEventHub } from "../../../src/domain/event-hub.ts";
import { ThreadReservations } from "../../../src/domain/thread-reservations.ts";
import { authSessionStore } from "../../../src/persistence/auth-store.ts";
import { openSqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { openConnection, type RawSocket } from "../../../src/transport/connection.ts";
import type { ProtocolDeps } from "../../../src/transport/context.ts";
import { DISPATCH } from "../../../src/transport/dispatch.ts";
import { PROTOCOL } from "../../../src/transport/frames.ts";
import { transportLimits } from "../../../src/transport/options.ts";
import { rawSocket } from "../../../src/transport/ws-raw.ts";
import { defaultCredentials, TestClock, TOKENS } from "../../support/protocol-harness.ts";
import { tempDir } from "../../support/temp.ts";

test("P-PRF-12 a pump hands a page of events to the socket in one call, in seq order, byte for byte the frames one send each gave", async (t) => {
  const opened = openSqliteStore({ path: join(tempDir(t), "c.sqlite") });
  assert.ok(opened.ok);
  const store = opened.value;
  t.after(() => store.close());
  const clock = new TestClock();
  const limits = transportLimits({ port: 0 });
  assert.ok(limits.ok);
  let n = 0;
  const deps: ProtocolDeps = {
    store, auth: createAuthSessions({ store: authSessionStore(store.handle), credentials: defaultCredentials(), clock, ttlMs: 60_000, newId: () => `as-${++n}` }),
    turns: null, endpoints: new EndpointRegistry(8), reservations: new ThreadReservations(8, 60_000), hub: new ThreadEventHub(), clock,
    newId: () => `id-${++n}`, limits: limits.value, known: { workspaces: null, providers: null }, log: () => {},
  };
  const calls: string[][] = [];
  const socket: RawSocket = { bufferedAmount: 0, send: (text) => void calls.push([text]), sendAll: (texts) => void calls.push([...texts]), close: () => {} };
  const handle = openConnection({ deps, table: DISPATCH, closeSession: () => {}, forget: () => {} }, socket, "c1");
  t.after(() => handle.closed());
  const request = async (id: string, method: string, params: Record<string, unknown>) => {
    const text = JSON.stringify({ jsonrpc: "2.0", id, method, params });
    handle.message(text, text.length, false);
    for (let i = 0; i < 20 && !calls.flat().some((f) => JSON.parse(f).id === id); i++) await new Promise((r) => setImmediate(r));
    return JSON.parse(calls.flat().find((f) => JSON.parse(f).id === id) as string) as Record<string, any>;
  };
  assert.ok((await request("h", "hello", { protocol: PROTOCOL, credential: { type: "token", token: TOKENS.appA } })).result);
  const { threadId } = (await request("c", "threads.create", { commandId: "c", workspace: "w", provider: "p" })).result;
  const sub = (await request("s", "threads.subscribe", { threadId })).result;
  await new Promise((r) => setImmediate(r));
  calls.length = 0;
  for (let i = 0; i < 5; i++) store.journal.append({ threadId, turnId: null, visibility: "transcript", kind: "activity", createdAt: i });
  deps.hub.published(threadId);
  await new Promise((r) => setImmediate(r));
  assert.equal(calls.length, 1, "one call for the page");
  const frames = calls[0] as string[];
  const events = store.journal.replay(threadId, sub.cursor).events;
  assert.equal(events.length, 5);
  assert.deepEqual(frames, events.map((e) => JSON.stringify({ jsonrpc: "2.0", method: "event", params: { subscriptionId: sub.subscriptionId, threadId, seq: e.seq, event: e } })));
});

test("P-PRF-12 the ws adapter writes frames sent together in one write of the TCP socket; the client gets each frame, in order", async (t) => {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
  await new Promise<void>((ready) => server.once("listening", () => ready()));
  const accepted = new Promise<WebSocket>((resolve) => server.once("connection", (s) => resolve(s)));
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  t.after(async () => {
    client.terminate();
    for (const s of server.clients) s.terminate();
    await new Promise<void>((done) => server.close(() => done()));
  });
  const got: string[] = [];
  client.on("message", (data) => got.push(String(data)));
  await new Promise<void>((open) => client.once("open", () => open()));
  const peer = await accepted;
  const stream = (peer as unknown as { _socket: { _write: (...a: unknown[]) => void; _writev: (...a: unknown[]) => void } })._socket;
  const writes = { write: 0, writev: 0 };
  const write = stream._write.bind(stream), writev = stream._writev.bind(stream);
  stream._write = (...a) => { writes.write += 1; write(...a); };
  stream._writev = (...a) => { writes.writev += 1; writev(...a); };
  const raw = rawSocket(peer);
  const frames = Array.from({ length: 6 }, (_, i) => JSON.stringify({ jsonrpc: "2.0", method: "event", params: { seq: i + 1, text: "x".repeat(i * 40) } }));
  raw.sendAll?.(frames);
  for (let i = 0; i < 100 && got.length < frames.length; i++) await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(got, frames);
  assert.deepEqual(writes, { write: 0, writev: 1 }, "one writev for the six frames");
  // One frame alone is written as ws writes any frame (its header and payload in one write), not corked.
  raw.sendAll?.(["{}"]);
  for (let i = 0; i < 100 && got.length < frames.length + 1; i++) await new Promise((r) => setTimeout(r, 5));
  assert.equal(got.at(-1), "{}");
  assert.equal(writes.write + writes.writev, 2);
});
