// A subscription pump serves the rows just committed from the thread's
// committed tail instead of reading them back (transport/subscriptions.ts,
// domain/event-tail.ts): the same frames in the same order, nothing before
// its COMMIT, and a row written by another path (not in the tail) still
// reaches the subscriber in the same wake, with no gap and no duplicate.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import { createAuthSessions } from "../../../src/auth/auth-sessions.ts";
import { EndpointRegistry } from "../../../src/domain/endpoint-registration.ts";
import { ThreadEventHub } from "../../../src/domain/event-hub.ts";
import { ThreadReservations } from "../../../src/domain/thread-reservations.ts";
import { authSessionStore } from "../../../src/persistence/auth-store.ts";
import { engineStore } from "../../../src/persistence/engine-store.ts";
import { openSqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { openConnection, type RawSocket } from "../../../src/transport/connection.ts";
import type { ProtocolDeps } from "../../../src/transport/context.ts";
import { DISPATCH } from "../../../src/transport/dispatch.ts";
import { PROTOCOL } from "../../../src/transport/frames.ts";
import { transportLimits } from "../../../src/transport/options.ts";
import { defaultCredentials, TestClock, TOKENS } from "../../support/protocol-harness.ts";
import { tempDir } from "../../support/temp.ts";

const tick = () => new Promise((r) => setImmediate(r));

async function harness(t: TestContext) {
  const opened = openSqliteStore({ path: join(tempDir(t), "c.sqlite") });
  assert.ok(opened.ok);
  const store = opened.value;
  t.after(() => store.close());
  const clock = new TestClock();
  const limits = transportLimits({ port: 0 });
  assert.ok(limits.ok);
  let n = 0;
  let reads = 0;
  const hub = new ThreadEventHub();
  // The journal as the pump sees it, counting its replay reads.
  const journal = { ...store.journal, replay: (...a: Parameters<typeof store.journal.replay>) => { reads += 1; return store.journal.replay(...a); } };
  const deps: ProtocolDeps = {
    store: { transact: store.transact, retention: store.retention, threads: store.threads, commands: store.commands, journal },
    auth: createAuthSessions({ store: authSessionStore(store.handle), credentials: defaultCredentials(), clock, ttlMs: 60_000, newId: () => `as-${++n}` }),
    turns: null, endpoints: new EndpointRegistry(8), reservations: new ThreadReservations(8, 60_000), hub, clock,
    newId: () => `id-${++n}`, limits: limits.value, known: { workspaces: null, providers: null }, log: () => {},
  };
  const frames: string[] = [];
  const socket: RawSocket = { bufferedAmount: 0, send: (text) => void frames.push(text), sendAll: (texts) => void frames.push(...texts), close: () => {} };
  const handle = openConnection({ deps, table: DISPATCH, closeSession: () => {}, forget: () => {} }, socket, "c1");
  t.after(() => handle.closed());
  const request = async (id: string, method: string, params: Record<string, unknown>) => {
    const text = JSON.stringify({ jsonrpc: "2.0", id, method, params });
    handle.message(text, text.length, false);
    for (let i = 0; i < 20 && !frames.some((f) => JSON.parse(f).id === id); i++) await tick();
    return JSON.parse(frames.find((f) => JSON.parse(f).id === id) as string) as Record<string, any>;
  };
  assert.ok((await request("h", "hello", { protocol: PROTOCOL, credential: { type: "token", token: TOKENS.appA } })).result);
  const { threadId } = (await request("c", "threads.create", { commandId: "c", workspace: "w", provider: "p" })).result as { threadId: string };
  const sub = (await request("s", "threads.subscribe", { threadId })).result as { subscriptionId: string; cursor: number };
  await tick();
  frames.length = 0;
  const readsBefore = reads;
  // The service's wiring: the tail hears each transcript row after its COMMIT; a notice wakes the pumps.
  const engine = engineStore(store, (id) => hub.published(id), undefined, (record) => hub.tail.committed(record));
  const event = (text: string): void => engine.appendGrouped({ threadId, turnId: null, type: "text", visibility: "transcript", data: { messageId: "m1", text } });
  const expected = (after: number) => store.journal.replay(threadId, after).events.map((e) =>
    JSON.stringify({ jsonrpc: "2.0", method: "event", params: { subscriptionId: sub.subscriptionId, threadId, seq: e.seq, event: e } }));
  return { store, hub, engine, event, threadId, sub, frames, expected, reads: () => reads - readsBefore };
}

test("P-PRF-18 P-PRF-12 rows just committed are pumped from the tail: the frames the journal read gave, without reading it", async (t) => {
  const h = await harness(t);
  h.event("one");
  h.engine.txGrouped(() => {});
  h.event("two");
  assert.deepEqual(h.frames, [], "nothing before the commit");
  await tick();
  await tick();
  assert.equal(h.frames.length, 2);
  assert.deepEqual(h.frames, h.expected(h.sub.cursor));
  assert.equal(h.reads(), 0, "no replay read");
  assert.equal(h.hub.tail.rows(h.threadId), 0, "the rows sent are not kept");
});

test("P-PRF-18 a row another path wrote after the tail's rows reaches the subscriber in the same wake, in order, once", async (t) => {
  const h = await harness(t);
  h.event("from the tail");
  await tick();
  await tick();
  assert.equal(h.frames.length, 1);
  // Committed rows the tail never heard of: the thread's last seq is past the tail, so the pump reads the journal.
  h.event("tail again");
  h.engine.flush();
  h.store.journal.append({ threadId: h.threadId, turnId: null, visibility: "transcript", kind: "activity", createdAt: 1 });
  h.hub.published(h.threadId);
  await tick();
  await tick();
  assert.deepEqual(h.frames, h.expected(h.sub.cursor), "every row once, in seq order");
  assert.equal(h.frames.length, 3);
  assert.ok(h.reads() >= 1, "the journal was read for the row the tail did not hold");
});
