// The committed tail of a subscribed thread (domain/event-tail.ts): only
// watched threads, only transcript rows, contiguous by seq, bounded, and no
// row with a volatile payload.
import assert from "node:assert/strict";
import { test } from "node:test";
import { EVENT_TAIL_MAX_BYTES, EventTail } from "../../../src/domain/event-tail.ts";
import type { JournalRecord } from "../../../src/domain/records.ts";

function row(seq: number | null, over: Partial<JournalRecord> = {}): JournalRecord {
  return { journalId: seq ?? 0, threadId: "t1", turnId: "turn-1", seq, visibility: seq === null ? "owner" : "transcript", kind: "text", messageId: "m1",
    payloadState: "stored", payload: { text: `w${String(seq)}` }, metadata: { messageId: "m1" }, createdAt: 1_000 + (seq ?? 0), ...over };
}
const seqs = (tail: EventTail, cursor: number) => tail.page("t1", cursor)?.map((e) => e.event.seq) ?? null;

test("P-PRF-18 a watched thread's committed rows are served after a cursor the tail holds; the JSON is the event's", () => {
  const tail = new EventTail();
  tail.committed(row(1));
  assert.equal(seqs(tail, 0), null, "an unwatched thread keeps nothing");
  const release = tail.watch("t1");
  for (const s of [1, 2, 3]) tail.committed(row(s));
  tail.committed(row(null));
  assert.deepEqual(seqs(tail, 0), [1, 2, 3]);
  assert.deepEqual(seqs(tail, 1), [2, 3]);
  assert.equal(seqs(tail, 3), null, "nothing after the last row: the journal answers");
  const [first] = tail.page("t1", 0) ?? [];
  assert.deepEqual(first?.event, { seq: 1, turnId: "turn-1", kind: "text", messageId: "m1", metadata: { messageId: "m1" }, createdAt: 1_001, payload: { text: "w1" } });
  assert.equal(first?.json, JSON.stringify(first?.event));
  assert.deepEqual(Object.keys(tail.page("t1", 0)?.[0]?.event ?? {}), ["seq", "turnId", "kind", "messageId", "metadata", "createdAt", "payload"], "the replay page's key order");
  release();
  release();
  assert.equal(tail.size, 0);
  assert.equal(seqs(tail, 0), null);
});

test("P-PRF-18 a row that does not follow the last starts the tail again; a cursor before the tail reads the journal", () => {
  const tail = new EventTail();
  tail.watch("t1");
  tail.committed(row(1));
  tail.committed(row(2));
  tail.committed(row(4));
  assert.equal(seqs(tail, 0), null);
  assert.equal(seqs(tail, 2), null, "seq 3 was written elsewhere: not in the tail");
  assert.deepEqual(seqs(tail, 3), [4]);
});

test("P-PRF-18 P-STO-17 a volatile payload never enters the tail and ends it; a payload-free row does, without a payload", () => {
  const tail = new EventTail();
  tail.watch("t1");
  tail.committed(row(1));
  tail.committed(row(2, { payloadState: "volatile", payload: null }));
  assert.equal(seqs(tail, 0), null);
  assert.equal(seqs(tail, 1), null);
  tail.committed(row(3, { payloadState: "none", payload: null, kind: "turn_state" }));
  assert.deepEqual(seqs(tail, 2), [3]);
  assert.equal("payload" in (tail.page("t1", 2)?.[0]?.event ?? {}), false);
});

test("P-PRF-18 the tail is bounded in rows and bytes, the oldest rows going first; a row above the byte bound clears it", () => {
  const tail = new EventTail({ rows: 3, bytes: 500 });
  tail.watch("t1");
  for (const s of [1, 2, 3, 4, 5]) tail.committed(row(s));
  assert.deepEqual(seqs(tail, 2), [3, 4, 5]);
  assert.equal(seqs(tail, 1), null);
  tail.committed(row(6, { payload: { text: "x".repeat(300) } }));
  assert.deepEqual(seqs(tail, 5), [6], "bytes: the older rows went");
  tail.committed(row(7, { payload: { text: "y".repeat(500) } }));
  assert.equal(seqs(tail, 6), null);
  tail.committed(row(8));
  assert.deepEqual(seqs(tail, 7), [8]);
});

test("P-PRF-18 rows a pump has sent are dropped; the next committed rows start the tail again", () => {
  const tail = new EventTail();
  tail.watch("t1");
  for (const s of [1, 2, 3]) tail.committed(row(s));
  tail.drop("t1", 2);
  assert.equal(tail.rows("t1"), 1);
  assert.deepEqual(seqs(tail, 2), [3]);
  assert.equal(seqs(tail, 1), null, "a subscriber behind reads the journal");
  tail.drop("t1", 3);
  assert.equal(tail.rows("t1"), 0);
  tail.committed(row(4));
  assert.deepEqual(seqs(tail, 3), [4]);
});

test("P-PRF-18 two watchers keep the tail until both release it", () => {
  const tail = new EventTail();
  const a = tail.watch("t1");
  const b = tail.watch("t1");
  tail.committed(row(1));
  a();
  assert.deepEqual(seqs(tail, 0), [1]);
  b();
  assert.equal(tail.size, 0);
});

test("P-PRF-18 the byte bound is the config's limits.storage.eventTailBytes: 0 keeps no tail, a larger value is held to its ceiling", () => {
  const off = new EventTail({ rows: 256, bytes: 0 });
  const release = off.watch("t1");
  for (const s of [1, 2]) off.committed(row(s));
  assert.equal(off.size, 0, "no thread is watched");
  assert.equal(seqs(off, 0), null, "every page comes from the journal");
  release();
  const capped = new EventTail({ rows: 256, bytes: Number.MAX_SAFE_INTEGER });
  capped.watch("t1");
  capped.committed(row(1, { payload: { text: "x".repeat(EVENT_TAIL_MAX_BYTES) } }));
  assert.equal(capped.rows("t1"), 0, "a row above the ceiling is not kept");
  capped.committed(row(2));
  assert.deepEqual(seqs(capped, 1), [2]);
});
