// The service's journal notices (domain/event-hub.ts `journalNotices`): a
// committed group of agent events wakes the thread's listeners once, after
// its COMMIT, with the thread id alone. The notice reads nothing from the
// journal (no `max(seq)` query per commit): listeners read by their own cursor.
// It waits for the next macrotask, so the code that committed (a receipt on
// its way to the dispatch commit and the prompt) is never interleaved with
// the listeners' reads and sends.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import { setImmediate } from "node:timers/promises";
import { journalNotices, ThreadEventHub } from "../../../src/domain/event-hub.ts";
import { engineStore } from "../../../src/persistence/engine-store.ts";
import { openSqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { threadFixture, turnFixture } from "../../support/fixtures.ts";
import { tempDir } from "../../support/temp.ts";

/** A fresh store holding thread-1 and its turn-1, closed after the test. */
function storeWithTurn(t: TestContext) {
  const opened = openSqliteStore({ path: join(tempDir(t), "controller.sqlite") });
  assert.ok(opened.ok);
  const store = opened.value;
  t.after(() => store.close());
  assert.ok(store.threads.insert(threadFixture()).ok);
  assert.ok(store.turns.insert(turnFixture()).ok);
  return store;
}

test("P-PRF-10 P-ARC-14 a committed group wakes a thread's listeners once, after the COMMIT, and the notice reads no journal seq", async (t) => {
  const store = storeWithTurn(t);
  let seqReads = 0;
  const lastSeq = store.journal.lastSeq.bind(store.journal);
  store.journal.lastSeq = (threadId: string) => { seqReads += 1; return lastSeq(threadId); };
  const hub = new ThreadEventHub();
  const heard: { args: unknown[]; replayed: number }[] = [];
  // A listener as the subscription pump is one: it reads the journal itself, by cursor.
  hub.listen("thread-1", (...args: unknown[]) => heard.push({ args, replayed: store.journal.replay("thread-1").events.length }));
  const engine = engineStore(store, journalNotices(hub));
  for (let i = 0; i < 5; i++) engine.appendGrouped({ threadId: "thread-1", turnId: "turn-1", type: "text", visibility: "transcript", data: { messageId: `m${i}`, text: `piece ${i}` } });
  await Promise.resolve();
  assert.deepEqual(heard, [], "nothing heard before the group's COMMIT");
  await setImmediate();
  await setImmediate();
  assert.deepEqual(heard, [{ args: ["thread-1"], replayed: 5 }], "one wake-up, the thread id only, every row of the group readable");
  // A transaction's own appends notify the same way.
  engine.tx(() => engine.append({ threadId: "thread-1", turnId: "turn-1", type: "turn_state", visibility: "transcript", data: { state: "running", code: null, stopReason: null } }));
  await setImmediate();
  assert.equal(heard.length, 2);
  assert.deepEqual(heard[1], { args: ["thread-1"], replayed: 6 });
  assert.equal(seqReads, 0, "no max(seq) read for a notice");
});

test("P-PRF-11 a commit's notice waits for the next macrotask: the committing code's synchronous and microtask work (a receipt running on to its dispatch commit) goes first, and both commits wake a listener once", async (t) => {
  const store = storeWithTurn(t);
  const hub = new ThreadEventHub();
  const order: string[] = [];
  hub.listen("thread-1", () => order.push(`heard ${store.journal.replay("thread-1").events.length}`));
  const engine = engineStore(store, journalNotices(hub));
  const state = (s: string) => engine.tx(() => engine.append({ threadId: "thread-1", turnId: "turn-1", type: "turn_state", visibility: "transcript", data: { state: s, code: null, stopReason: null } }));
  // A receipt's commit, then, through a chain of awaits (preparation), the dispatch commit and the prompt.
  state("preparing");
  order.push("receipt committed");
  await (async () => {
    for (let i = 0; i < 20; i++) await Promise.resolve();
    state("dispatched");
    order.push("prompt written");
  })();
  assert.deepEqual(order, ["receipt committed", "prompt written"], "no listener ran on the way to the prompt");
  await setImmediate();
  assert.deepEqual(order, ["receipt committed", "prompt written", "heard 2"], "one wake-up for both commits, after them");
  // Another thread's notice in the same round is its own; a later commit is heard again.
  state("running");
  await setImmediate();
  assert.deepEqual(order.slice(3), ["heard 3"]);
});
