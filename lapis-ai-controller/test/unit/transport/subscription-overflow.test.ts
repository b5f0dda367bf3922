// A subscriber that reads too slowly is dropped with subscription.closed
// (reason overflow) instead of buffering without bound; the connection is
// driven directly with a socket stand-in whose buffered amount the test sets.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
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
import { defaultCredentials, TestClock, TOKENS } from "../../support/protocol-harness.ts";
import { tempDir } from "../../support/temp.ts";

test("AIC-WIRE-06 a subscriber over maxBufferedBytes gets subscription.closed overflow; a resubscribe from its cursor resumes", async (t) => {
  const opened = openSqliteStore({ path: join(tempDir(t), "c.sqlite") });
  assert.ok(opened.ok);
  const store = opened.value;
  t.after(() => store.close());
  const clock = new TestClock();
  const limits = transportLimits({ port: 0, maxBufferedBytes: 64 * 1024 });
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
  const sent: Record<string, any>[] = [];
  const socket: RawSocket & { bufferedAmount: number } = { bufferedAmount: 0, send: (text) => void sent.push(JSON.parse(text)), close: () => {} };
  const handle = openConnection({ deps, table: DISPATCH, closeSession: () => {}, forget: () => {} }, socket, "c1");
  t.after(() => handle.closed());
  const request = async (id: string, method: string, params: Record<string, unknown>) => {
    const text = JSON.stringify({ jsonrpc: "2.0", id, method, params });
    handle.message(text, text.length, false);
    for (let i = 0; i < 20 && !sent.some((f) => f.id === id); i++) await new Promise((r) => setImmediate(r));
    return sent.find((f) => f.id === id) as Record<string, any>;
  };
  assert.ok((await request("h", "hello", { protocol: PROTOCOL, credential: { type: "token", token: TOKENS.appA } })).result);
  const { threadId } = (await request("c", "threads.create", { commandId: "c", workspace: "w", provider: "p" })).result;
  const sub = (await request("s", "threads.subscribe", { threadId, afterSeq: 0 })).result;
  await new Promise((r) => setImmediate(r));
  assert.equal(sent.filter((f) => f.method === "event").length, 1);
  socket.bufferedAmount = 1024 * 1024;
  store.journal.append({ threadId, turnId: null, visibility: "transcript", kind: "activity", createdAt: 0 });
  deps.hub.published(threadId);
  await new Promise((r) => setImmediate(r));
  const closed = sent.find((f) => f.method === "subscription.closed");
  assert.deepEqual(closed?.params, { subscriptionId: sub.subscriptionId, threadId, reason: "overflow" });
  assert.equal(sent.filter((f) => f.method === "event").length, 1);
  socket.bufferedAmount = 0;
  await request("s2", "threads.subscribe", { threadId, afterSeq: 1 });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(sent.filter((f) => f.method === "event").map((f) => f.params.seq), [1, 2]);
});
