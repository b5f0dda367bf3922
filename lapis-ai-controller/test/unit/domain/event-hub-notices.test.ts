// Journal notices are merged per thread and microtask round: a burst of
// appends wakes a thread's listeners once, after the writing code has run.
import assert from "node:assert/strict";
import { test } from "node:test";
import { coalescedNotices } from "../../../src/domain/event-hub.ts";

test("P-PRF-04 a burst of notices publishes once per thread, after the synchronous writer; a later burst publishes again", async () => {
  const published: string[] = [];
  const notice = coalescedNotices((threadId) => published.push(threadId));
  for (let i = 0; i < 40; i++) notice("a");
  notice("b");
  assert.deepEqual(published, [], "nothing while the writer (a transaction) still runs");
  await Promise.resolve();
  assert.deepEqual(published.sort(), ["a", "b"]);
  notice("a");
  await Promise.resolve();
  assert.deepEqual(published.sort(), ["a", "a", "b"]);
});
