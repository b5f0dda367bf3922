// The SDK routes each event notification to its watch by subscription id
// (P-PRF-21): the watch of that subscription only, catch-up events that
// arrive before a subscribe's reply to the thread's pending watch, nothing to
// a closed watch, and `subscription.closed` resumes exactly its watch.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { RawRequest, ThreadEventDelivery } from "../../../src/sdk/watches.ts";
import { ThreadWatches } from "../../../src/sdk/watches.ts";

type Call = { method: string; params: Record<string, unknown>; answer: (value: unknown) => void };

function fakeService() {
  const calls: Call[] = [];
  const raw: RawRequest = (method, params) => new Promise((resolve) => {
    calls.push({ method, params, answer: (value) => resolve({ ok: true, value }) });
  });
  return { calls, raw };
}

const event = (subscriptionId: string, threadId: string, seq: number) => ({ subscriptionId, threadId, seq, event: { kind: "text", seq } });

test("P-PRF-21 an event reaches the watch of its subscription only, among many watches of many threads", async () => {
  const { calls, raw } = fakeService();
  const watches = new ThreadWatches(raw, () => new Error("refused"));
  const seen = new Map<string, number[]>();
  const handles = [];
  for (let i = 0; i < 200; i++) {
    const threadId = `t${i % 50}`;
    const name = `w${i}`;
    seen.set(name, []);
    const added = watches.add(threadId, { event: (d: ThreadEventDelivery) => void seen.get(name)?.push(d.seq) });
    const call = calls[calls.length - 1] as Call;
    assert.equal(call.method, "threads.subscribe");
    call.answer({ subscriptionId: `s${i}`, cursor: 0 });
    handles.push(await added);
  }
  assert.ok(watches.onNotification("event", event("s57", "t7", 1)));
  assert.ok(watches.onNotification("event", event("s57", "t7", 2)));
  assert.ok(watches.onNotification("event", event("s57", "t7", 2)), "a duplicate is dropped");
  assert.ok(watches.onNotification("event", event("s57", "t8", 3)), "a subscription's id with another thread reaches nobody");
  for (const [name, seqs] of seen) assert.deepEqual(seqs, name === "w57" ? [1, 2] : [], name);
  // Closed: its events reach nobody, and the unsubscribe names its subscription.
  const closing = handles[57]?.close();
  const unsubscribe = calls[calls.length - 1] as Call;
  assert.deepEqual([unsubscribe.method, unsubscribe.params], ["threads.unsubscribe", { subscriptionId: "s57" }]);
  unsubscribe.answer({ subscriptionId: "s57" });
  await closing;
  watches.onNotification("event", event("s57", "t7", 4));
  assert.deepEqual(seen.get("w57"), [1, 2]);
  // subscription.closed resumes exactly that watch: a snapshot, then a subscribe from its cursor.
  const before = calls.length;
  watches.onNotification("subscription.closed", { subscriptionId: "s58", threadId: "t8", reason: "overflow" });
  await null;
  assert.deepEqual(calls.slice(before).map((c) => [c.method, c.params]), [["threads.snapshot", { threadId: "t8" }]]);
});

test("P-PRF-21 catch-up events before a subscribe's reply go to the thread's pending watch, not to its other watches or another thread's", async () => {
  const { calls, raw } = fakeService();
  const watches = new ThreadWatches(raw, () => new Error("refused"));
  const a: number[] = [], b: number[] = [], other: number[] = [];
  const first = watches.add("t1", { event: (d) => void a.push(d.seq) }, 0);
  (calls[0] as Call).answer({ subscriptionId: "sa", cursor: 0 });
  await first;
  const third = watches.add("t2", { event: (d) => void other.push(d.seq) }, 0);
  (calls[1] as Call).answer({ subscriptionId: "sc", cursor: 0 });
  await third;
  const second = watches.add("t1", { event: (d) => void b.push(d.seq) }, 0);
  await null;
  const pending = calls[2] as Call;
  assert.deepEqual([pending.method, pending.params], ["threads.subscribe", { threadId: "t1", afterSeq: 0 }]);
  // The new subscription's catch-up arrives before its reply: its id is not known yet.
  watches.onNotification("event", event("sb", "t1", 1));
  watches.onNotification("event", event("sb", "t1", 2));
  watches.onNotification("event", event("sa", "t1", 1));
  pending.answer({ subscriptionId: "sb", cursor: 2 });
  await second;
  watches.onNotification("event", event("sb", "t1", 3));
  assert.deepEqual(b, [1, 2, 3]);
  assert.deepEqual(a, [1]);
  assert.deepEqual(other, []);
  // After endAll nothing is delivered.
  watches.endAll("client_closed");
  watches.onNotification("event", event("sb", "t1", 4));
  watches.onNotification("event", event("sx", "t1", 5));
  assert.deepEqual(b, [1, 2, 3]);
});
