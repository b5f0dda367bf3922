import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import type { StateStore } from "../../../src/state/types.ts";
import {
  baseline, candidate, ingest, openRun, replyPayload, tempDatabase, testClock, type TestClock,
} from "../../support/state-fixtures.ts";

const A = "!room-a:example.org";
const B = "!room-b:example.org";
const LEASE = 60_000;

let db: ReturnType<typeof tempDatabase>;
let clock: TestClock;
let store: StateStore;

beforeEach(() => {
  db = tempDatabase();
  clock = testClock();
  store = openRun(db.path, clock);
  baseline(store, [A, B]);
});

afterEach(() => {
  store.close();
  db.cleanup();
});

describe("room order", () => {
  test("a room's oldest invocation is leased first, by server time then event id", () => {
    ingest(store, [
      candidate(3, { receivedAtMs: 10, eventId: "$c:example.org" }),
      candidate(2, { receivedAtMs: 5, eventId: "$b:example.org" }),
      candidate(1, { receivedAtMs: 5, eventId: "$a:example.org" }),
    ]);
    const order: string[] = [];
    for (let work = store.nextForRoom(A, LEASE); work !== null; work = store.nextForRoom(A, LEASE)) {
      order.push(work.invocation.eventId);
      store.markIgnored(work.invocation.eventId, "test_done");
    }
    assert.deepEqual(order, ["$a:example.org", "$b:example.org", "$c:example.org"]);
  });

  test("nextForRoom never returns another room's row", () => {
    ingest(store, [candidate(1, { roomId: B })]);
    assert.equal(store.nextForRoom(A, LEASE), null);
    assert.equal(store.nextForRoom(B, LEASE)?.invocation.roomId, B);
  });

  test("a leased head blocks later rows of its room but not other rooms", () => {
    ingest(store, [candidate(1), candidate(2), candidate(3, { roomId: B })]);
    assert.equal(store.nextForRoom(A, LEASE)?.invocation.eventId, "$event1:example.org");
    assert.equal(store.nextForRoom(A, LEASE), null, "strict FIFO: event2 waits while event1 is processing");
    assert.equal(store.nextForRoom(B, LEASE)?.invocation.eventId, "$event3:example.org");
  });

  test("a head in backoff keeps later rows of its room waiting (strict FIFO)", () => {
    ingest(store, [candidate(1), candidate(2)]);
    const first = store.nextForRoom(A, LEASE);
    assert.ok(first !== null);
    store.releaseLease(first.invocation.eventId, "llm_unavailable", clock.now() + 5_000);
    assert.equal(store.nextForRoom(A, LEASE), null);
    assert.deepEqual(store.roomsWithWork(), []);
    assert.equal(store.nextWakeAtMs(), clock.now() + 5_000);
    clock.advance(5_000);
    assert.deepEqual(store.roomsWithWork(), [A]);
    assert.equal(store.nextForRoom(A, LEASE)?.invocation.eventId, "$event1:example.org");
  });

  test("a ready reply is returned for sending, stays ready_to_send and is send-leased", () => {
    ingest(store, [candidate(1), candidate(2)]);
    const work = store.nextForRoom(A, LEASE);
    assert.ok(work !== null);
    store.commitReady(work.invocation.eventId, replyPayload("hi"));
    const send = store.nextForRoom(A, LEASE);
    assert.equal(send?.kind, "send");
    assert.equal(send.invocation.status, "ready_to_send");
    assert.equal(send.invocation.responseJson, replyPayload("hi"));
    assert.equal(store.nextForRoom(A, LEASE), null, "a second loop cannot take the same send, nor the next row");
    clock.advance(LEASE);
    assert.equal(store.nextForRoom(A, LEASE)?.kind, "send", "an expired send lease makes the reply available again");
  });

  test("a rejected send waiting for its retry lets later invocations of its room proceed", () => {
    ingest(store, [candidate(1), candidate(2)]);
    const work = store.nextForRoom(A, LEASE);
    assert.ok(work !== null);
    store.commitReady(work.invocation.eventId, replyPayload("hi"));
    const send = store.nextForRoom(A, LEASE);
    assert.equal(send?.kind, "send");
    store.recordSendFailure(send.invocation.eventId, "matrix_forbidden", clock.now() + 3_600_000);
    assert.deepEqual(store.roomsWithWork(), [A]);
    const next = store.nextForRoom(A, LEASE);
    assert.deepEqual([next?.kind, next?.invocation.eventId], ["process", "$event2:example.org"]);
    store.markIgnored("$event2:example.org", "test_done");
    assert.equal(store.nextForRoom(A, LEASE), null, "the failed reply waits for its retry time");
    clock.advance(3_600_000);
    const retry = store.nextForRoom(A, LEASE);
    assert.deepEqual([retry?.kind, retry?.invocation.eventId], ["send", "$event1:example.org"]);
    assert.equal(store.invocation("$event1:example.org")?.status, "ready_to_send");
  });
});

describe("rooms with work", () => {
  test("lists rooms whose head is actionable now, oldest head first", () => {
    ingest(store, [candidate(2, { roomId: B, receivedAtMs: 1 }), candidate(1, { receivedAtMs: 2 })]);
    assert.deepEqual(store.roomsWithWork(), [B, A]);
    store.nextForRoom(B, LEASE);
    assert.deepEqual(store.roomsWithWork(), [A]);
    assert.equal(store.nextWakeAtMs(), clock.now() + LEASE);
  });

  test("an empty ledger has no work and nothing to wake for", () => {
    assert.deepEqual(store.roomsWithWork(), []);
    assert.equal(store.nextWakeAtMs(), null);
  });
});

describe("leases", () => {
  test("a processing lease expires on the injected clock and is recovered to candidate", () => {
    ingest(store, [candidate(1)]);
    const work = store.nextForRoom(A, LEASE);
    assert.equal(work?.invocation.status, "processing");
    assert.equal(work.invocation.availableAtMs, clock.now() + LEASE);
    assert.equal(work.invocation.attemptCount, 1);
    clock.advance(LEASE - 1);
    assert.equal(store.recoverExpiredLeases(), 0);
    assert.deepEqual(store.roomsWithWork(), []);
    clock.advance(1);
    assert.deepEqual(store.roomsWithWork(), [A], "an expired lease is work");
    assert.equal(store.recoverExpiredLeases(), 1);
    assert.equal(store.invocation("$event1:example.org")?.status, "candidate");
    assert.equal(store.nextForRoom(A, LEASE)?.invocation.attemptCount, 2);
  });

  test("an expired processing head is re-leased directly by nextForRoom", () => {
    ingest(store, [candidate(1)]);
    store.nextForRoom(A, LEASE);
    clock.advance(LEASE);
    const again = store.nextForRoom(A, LEASE);
    assert.equal(again?.kind, "process");
    assert.equal(again.invocation.attemptCount, 2);
    assert.equal(again.invocation.availableAtMs, clock.now() + LEASE);
  });

  test("startup requeues every processing row and makes every ready reply available now", () => {
    ingest(store, [candidate(1), candidate(2, { roomId: B })]);
    const first = store.nextForRoom(A, LEASE);
    const second = store.nextForRoom(B, LEASE);
    assert.ok(first !== null && second !== null);
    store.commitReady(second.invocation.eventId, replyPayload("hi"));
    store.recordSendFailure(second.invocation.eventId, "matrix_server_error", clock.now() + 999_999);
    assert.deepEqual(store.requeueAllOnStartup(), { candidates: 1, ready: 1 });
    assert.equal(store.invocation(first.invocation.eventId)?.status, "candidate");
    assert.deepEqual(new Set(store.roomsWithWork()), new Set([A, B]));
  });

  test("a non-positive lease is refused", () => {
    assert.throws(() => store.nextForRoom(A, 0), { code: "state_invalid_input" });
  });
});
