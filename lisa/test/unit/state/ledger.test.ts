import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { StateStoreError } from "../../../src/errors.ts";
import type { StateStore } from "../../../src/state/types.ts";
import {
  baseline, candidate, ingest, openRun, replyPayload, tempDatabase, testClock, withRawDatabase, type TestClock,
} from "../../support/state-fixtures.ts";

let db: ReturnType<typeof tempDatabase>;
let clock: TestClock;
let store: StateStore;

beforeEach(() => {
  db = tempDatabase();
  clock = testClock();
  store = openRun(db.path, clock);
  baseline(store);
});

afterEach(() => {
  store.close();
  db.cleanup();
});

function leaseProcess(): string {
  const work = store.nextForRoom("!room-a:example.org", 60_000);
  assert.equal(work?.kind, "process");
  return work.invocation.eventId;
}

describe("sync batches", () => {
  test("inserting the same event twice creates one row", () => {
    assert.deepEqual(ingest(store, [candidate(1)], "s1"), ["$event1:example.org"]);
    assert.deepEqual(ingest(store, [candidate(1), candidate(1)], "s2"), []);
    assert.equal(store.status().countsByStatus.candidate, 1);
  });

  test("a new candidate is stored with its transaction id, availability and content", () => {
    ingest(store, [candidate(1)]);
    const row = store.invocation("$event1:example.org");
    assert.equal(row?.status, "candidate");
    assert.equal(row.availableAtMs, clock.now());
    assert.equal(row.attemptCount, 0);
    assert.match(row.matrixTxnId, /^lisa_/);
    assert.equal(row.rawEventJson, candidate(1).rawEventJson);
  });

  test("candidates and cursor commit atomically in one batch", () => {
    clock.advance(5);
    const { inserted } = store.commitSyncBatch({
      nextBatch: "s7",
      rooms: [{ roomId: "!room-a:example.org", lastTimelineEventId: "$event2:example.org" }],
      candidates: [candidate(1), candidate(2)],
    });
    assert.deepEqual(inserted, ["$event1:example.org", "$event2:example.org"]);
    assert.equal(store.syncState().nextBatch, "s7");
    assert.equal(store.syncState().lastSuccessMs, clock.now());
    const cursor = store.roomCursor("!room-a:example.org");
    assert.equal(cursor?.lastTimelineEventId, "$event2:example.org");
    assert.equal(cursor.baselineTsMs, 1_700_000_000_000, "the baseline timestamp survives a sync batch");
  });

  test("an invalid candidate in the middle of a batch leaves neither candidates nor cursor", () => {
    assert.throws(() => store.commitSyncBatch({
      nextBatch: "s8",
      rooms: [{ roomId: "!room-a:example.org", lastTimelineEventId: "$event3:example.org" }],
      candidates: [candidate(1), candidate(2, { rawEventJson: "not json" }), candidate(3)],
    }), (e: unknown) => e instanceof StateStoreError && e.code === "state_invalid_input");
    assert.equal(store.invocation("$event1:example.org"), null);
    assert.equal(store.syncState().nextBatch, "s0");
    assert.equal(store.roomCursor("!room-a:example.org")?.lastTimelineEventId, null);
  });

  test("a database failure after candidates and cursor were written rolls back the whole batch", () => {
    store.close();
    withRawDatabase(db.path, (raw) => raw.exec(
      "CREATE TRIGGER fail_sync BEFORE UPDATE ON sync_state BEGIN SELECT RAISE(ABORT, 'injected'); END"));
    store = openRun(db.path, clock);
    assert.throws(() => store.commitSyncBatch({
      nextBatch: "s9",
      rooms: [{ roomId: "!room-a:example.org", lastTimelineEventId: "$event1:example.org" }],
      candidates: [candidate(1)],
    }), (e: unknown) => e instanceof StateStoreError && e.code === "state_constraint" && !e.message.includes("event1"));
    assert.equal(store.invocation("$event1:example.org"), null);
    assert.equal(store.roomCursor("!room-a:example.org")?.lastTimelineEventId, null);
    assert.equal(store.syncState().nextBatch, "s0");
  });

  test("a sync batch before any baseline is refused", () => {
    store.resetBaseline();
    assert.throws(() => ingest(store, [candidate(1)]), { code: "state_invalid_transition" });
  });

  test("a baseline replaces the position and every room cursor", () => {
    store.commitBaseline({
      nextBatch: "b2",
      rooms: [{ roomId: "!room-b:example.org", lastTimelineEventId: "$anchor:example.org", baselineTsMs: 42 }],
    });
    assert.deepEqual(store.syncState(), { nextBatch: "b2", initialized: true, updatedAtMs: clock.now(), lastSuccessMs: clock.now() });
    assert.equal(store.roomCursor("!room-a:example.org"), null);
    assert.deepEqual(store.roomCursor("!room-b:example.org"), {
      lastTimelineEventId: "$anchor:example.org", baselineTsMs: 42, updatedAtMs: clock.now(),
    });
  });

  test("resetting the baseline forgets the position but keeps invocations and bot events", () => {
    ingest(store, [candidate(1)]);
    store.resetBaseline();
    const sync = store.syncState();
    assert.equal(sync.initialized, false);
    assert.equal(sync.nextBatch, null);
    assert.equal(store.invocation("$event1:example.org")?.status, "candidate");
  });

  test("markSyncSuccess stamps the last success without moving the position", () => {
    clock.advance(1_000);
    store.markSyncSuccess();
    assert.equal(store.syncState().lastSuccessMs, clock.now());
    assert.equal(store.syncState().nextBatch, "s0");
  });
});

describe("invocation lifecycle", () => {
  test("content is cleared after sent and the bot event is recorded in the same room", () => {
    ingest(store, [candidate(1)]);
    const eventId = leaseProcess();
    store.commitReady(eventId, replyPayload("hello"));
    assert.equal(store.nextForRoom("!room-a:example.org", 60_000)?.kind, "send");
    store.markSent(eventId, "$reply1:example.org");
    const row = store.invocation(eventId);
    assert.equal(row?.status, "sent");
    assert.equal(row.rawEventJson, null);
    assert.equal(row.responseJson, null);
    assert.equal(row.sentEventId, "$reply1:example.org");
    assert.equal(store.isBotEvent("$reply1:example.org", "!room-a:example.org"), true);
    assert.equal(store.isBotEvent("$reply1:example.org", "!room-b:example.org"), false);
  });

  test("content is cleared after ignored and the reason code is kept", () => {
    ingest(store, [candidate(1), candidate(2)]);
    store.markIgnored("$event1:example.org", "before_baseline");
    const eventId = leaseProcess();
    store.markIgnored(eventId, "not_addressed");
    for (const [id, code] of [["$event1:example.org", "before_baseline"], [eventId, "not_addressed"]] as const) {
      const row = store.invocation(id);
      assert.equal(row?.status, "ignored");
      assert.equal(row.rawEventJson, null);
      assert.equal(row.responseJson, null);
      assert.equal(row.lastErrorCode, code);
    }
  });

  test("marking sent twice with the same event id is idempotent", () => {
    ingest(store, [candidate(1)]);
    const eventId = leaseProcess();
    store.commitReady(eventId, replyPayload("hi"));
    store.markSent(eventId, "$reply:example.org");
    store.markSent(eventId, "$reply:example.org");
    assert.throws(() => store.markSent(eventId, "$other:example.org"), { code: "state_invalid_transition" });
  });

  test("a ready payload is never overwritten", () => {
    ingest(store, [candidate(1)]);
    const eventId = leaseProcess();
    store.commitReady(eventId, replyPayload("first"), "llm_timeout");
    assert.throws(() => store.commitReady(eventId, replyPayload("second")), { code: "state_invalid_transition" });
    const row = store.invocation(eventId);
    assert.equal(row?.responseJson, replyPayload("first"));
    assert.equal(row.lastErrorCode, "llm_timeout");
  });

  test("invalid transitions throw state_invalid_transition", () => {
    ingest(store, [candidate(1)]);
    const id = "$event1:example.org";
    assert.throws(() => store.markSent(id, "$reply:example.org"), { code: "state_invalid_transition" });
    assert.throws(() => store.commitReady(id, replyPayload("x")), { code: "state_invalid_transition" });
    assert.throws(() => store.recordSendFailure(id, "send_failed", clock.now()), { code: "state_invalid_transition" });
    assert.throws(() => store.releaseLease(id), { code: "state_invalid_transition" });
    assert.throws(() => store.markIgnored("$missing:example.org", "x"), { code: "state_not_found" });
  });

  test("a send failure keeps the reply ready with its code and backoff", () => {
    ingest(store, [candidate(1)]);
    const eventId = leaseProcess();
    store.commitReady(eventId, replyPayload("hi"));
    store.nextForRoom("!room-a:example.org", 60_000);
    store.recordSendFailure(eventId, "matrix_server_error", clock.now() + 30_000);
    const row = store.invocation(eventId);
    assert.equal(row?.status, "ready_to_send");
    assert.equal(row.lastErrorCode, "matrix_server_error");
    assert.equal(row.availableAtMs, clock.now() + 30_000);
    assert.equal(row.responseJson, replyPayload("hi"));
  });

  test("releasing a lease returns the row to candidate with optional backoff", () => {
    ingest(store, [candidate(1)]);
    const eventId = leaseProcess();
    assert.equal(store.releaseLease(eventId, "llm_unavailable", clock.now() + 10_000), true);
    const row = store.invocation(eventId);
    assert.equal(row?.status, "candidate");
    assert.equal(row.availableAtMs, clock.now() + 10_000);
    assert.equal(row.lastErrorCode, "llm_unavailable");
  });

  test("releasing a lease after the reply became ready changes nothing", () => {
    ingest(store, [candidate(1)]);
    const eventId = leaseProcess();
    store.commitReady(eventId, replyPayload("hi"));
    assert.equal(store.releaseLease(eventId, "shutdown"), false);
    assert.equal(store.invocation(eventId)?.status, "ready_to_send");
  });

  test("a response that is not a JSON object is refused", () => {
    ingest(store, [candidate(1)]);
    const eventId = leaseProcess();
    assert.throws(() => store.commitReady(eventId, "[1]"), { code: "state_invalid_input" });
    assert.equal(store.invocation(eventId)?.status, "processing");
  });
});

describe("errors", () => {
  test("a failed command surfaces a coded error and the store serves the next command", () => {
    ingest(store, [candidate(1)]);
    const eventId = leaseProcess();
    store.commitReady(eventId, replyPayload("hi"));
    store.markSent(eventId, "$reply:example.org");
    ingest(store, [candidate(2)], "s2");
    const second = leaseProcess();
    store.commitReady(second, replyPayload("again"));
    // Reusing a sent event id violates bot_events' primary key inside markSent's transaction.
    assert.throws(() => store.markSent(second, "$reply:example.org"),
      (e: unknown) => e instanceof StateStoreError && e.code === "state_constraint");
    assert.equal(store.invocation(second)?.status, "ready_to_send", "the failed transaction left no partial change");
    store.markSent(second, "$reply2:example.org");
    assert.equal(store.invocation(second)?.status, "sent");
  });

  test("a closed store refuses commands and closing twice is safe", () => {
    store.close();
    store.close();
    assert.throws(() => store.syncState(), { code: "state_closed" });
    store = openRun(db.path, clock);
  });
});

describe("LISA-STREAM-20: a streamed reply's message and edit numbers", () => {
  test("the message id and the first edit numbers commit together; later reservations continue above them", () => {
    ingest(store, [candidate(1)]);
    const id = leaseProcess();
    assert.deepEqual(store.beginReplyStream(id), { sentEventId: null, lastSeq: 0 });
    assert.equal(store.setReplyStreamEvent(id, "$message:example.org", 16), 1, "numbers 1-16 with the message id");
    assert.deepEqual(store.replyStream(id), { sentEventId: "$message:example.org", lastSeq: 16 });
    assert.equal(store.reserveEditSeqs(id, 16), 17);
    assert.equal(store.setReplyStreamEvent(id, "$message:example.org", 16), 33, "a message found again reserves above every earlier number");
    assert.equal(store.setReplyStreamEvent(id, "$message:example.org"), 49, "none reserved: the next number, nothing taken");
    assert.deepEqual(store.replyStream(id), { sentEventId: "$message:example.org", lastSeq: 48 });
    assert.throws(() => store.setReplyStreamEvent(id, "$message:example.org", -1), StateStoreError);
    assert.throws(() => store.setReplyStreamEvent(id, "$message:example.org", 1_001), StateStoreError);
    assert.deepEqual(store.replyStream(id), { sentEventId: "$message:example.org", lastSeq: 48 }, "a refused reservation changes nothing");
  });
});
