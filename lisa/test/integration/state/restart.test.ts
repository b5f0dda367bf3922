import assert from "node:assert/strict";
import { test } from "node:test";
import {
  baseline, candidate, ingest, openRun, replyPayload, databasePerTest, testClock,
} from "../../support/state-fixtures.ts";

const A = "!room-a:example.org";
const db = databasePerTest();
const clock = testClock();

test("a ready payload survives a restart byte for byte and is sent, not regenerated", () => {
  const payload = replyPayload("exact reply ✓ with \"quotes\"");
  const first = openRun(db.path, clock);
  baseline(first);
  ingest(first, [candidate(1), candidate(2)]);
  const work = first.nextForRoom(A, 60_000);
  assert.ok(work !== null);
  first.commitReady(work.invocation.eventId, payload);
  first.nextForRoom(A, 60_000);
  first.close();

  const second = openRun(db.path, clock);
  try {
    assert.deepEqual(second.requeueAllOnStartup(), { candidates: 0, ready: 1 });
    const send = second.nextForRoom(A, 60_000);
    assert.equal(send?.kind, "send");
    assert.equal(send.invocation.responseJson, payload);
    assert.equal(send.invocation.matrixTxnId, work.invocation.matrixTxnId);
  } finally {
    second.close();
  }
});

test("a processing lease left by a dead process is requeued on startup", () => {
  const first = openRun(db.path, clock);
  baseline(first);
  ingest(first, [candidate(1)]);
  first.nextForRoom(A, 3_600_000);
  first.close();
  const second = openRun(db.path, clock);
  try {
    assert.deepEqual(second.requeueAllOnStartup(), { candidates: 1, ready: 0 });
    assert.equal(second.nextForRoom(A, 60_000)?.invocation.attemptCount, 2);
  } finally {
    second.close();
  }
});

test("close then reopen loses no committed command", () => {
  const first = openRun(db.path, clock);
  baseline(first, [A]);
  first.commitSyncBatch({
    nextBatch: "s5",
    rooms: [{ roomId: A, lastTimelineEventId: "$event3:example.org" }],
    candidates: [candidate(1), candidate(2), candidate(3)],
  });
  const sent = first.nextForRoom(A, 60_000);
  assert.ok(sent !== null);
  first.commitReady(sent.invocation.eventId, replyPayload("one"));
  first.markSent(sent.invocation.eventId, "$reply1:example.org");
  first.markIgnored("$event2:example.org", "not_addressed");
  const before = ["$event1:example.org", "$event2:example.org", "$event3:example.org"].map((id) => first.invocation(id));
  first.close();

  const second = openRun(db.path, clock);
  try {
    assert.deepEqual(["$event1:example.org", "$event2:example.org", "$event3:example.org"].map((id) => second.invocation(id)), before);
    assert.equal(second.syncState().nextBatch, "s5");
    assert.equal(second.roomCursor(A)?.lastTimelineEventId, "$event3:example.org");
    assert.equal(second.isBotEvent("$reply1:example.org", A), true);
  } finally {
    second.close();
  }
});
