// Decoded thread rows are kept across reads (persistence/thread-store.ts):
// a turn reads its thread's row many times. What is kept is what is
// committed: a row read inside a transaction is not kept, every write drops
// its row, and a rolled-back change is never served.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import { openSqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { lifecycleStore } from "../../../src/persistence/thread-lifecycle-store.ts";
import { THREAD_ROWS_CACHED } from "../../../src/persistence/thread-store.ts";
import { threadFixture } from "../../support/fixtures.ts";
import { tempDir } from "../../support/temp.ts";

function fixture(t: TestContext) {
  const opened = openSqliteStore({ path: join(tempDir(t), "controller.sqlite") });
  assert.ok(opened.ok);
  const store = opened.value;
  t.after(() => store.close());
  assert.ok(store.threads.insert(threadFixture()).ok);
  return store;
}

test("P-PRF-08 a thread row read again is the kept, frozen record; a config change is read at once", (t) => {
  const store = fixture(t);
  const a = store.threads.get("thread-1");
  assert.ok(a);
  assert.equal(store.threads.get("thread-1"), a, "kept");
  assert.ok(Object.isFrozen(a) && Object.isFrozen(a.config) && Object.isFrozen(a.binding));
  const changed = store.threads.updateConfig("thread-1", a.configVersion, { approvalPolicy: "allow-all" }, 99);
  assert.ok(changed.ok);
  const b = store.threads.get("thread-1");
  assert.equal(b?.configVersion, a.configVersion + 1);
  assert.deepEqual(b?.config, { approvalPolicy: "allow-all" });
});

test("P-PRF-08 a change rolled back is never served, though it was read inside its transaction", (t) => {
  const store = fixture(t);
  const before = store.threads.get("thread-1");
  assert.ok(before);
  assert.throws(() => store.transact(() => {
    assert.ok(store.threads.updateConfig("thread-1", before.configVersion, { approvalPolicy: "allow-all" }, 99).ok);
    assert.deepEqual(store.threads.get("thread-1")?.config, { approvalPolicy: "allow-all" }, "the transaction reads its own change");
    throw new Error("roll back");
  }), /roll back/);
  const after = store.threads.get("thread-1");
  assert.equal(after?.configVersion, before.configVersion);
  assert.deepEqual(after?.config, before.config);
});

test("P-PRF-08 an erased thread reads as gone; past the bound the least recently read row is read again", (t) => {
  const store = fixture(t);
  assert.ok(store.threads.get("thread-1"));
  store.transact(() => lifecycleStore(store.handle).eraseRows("thread-1", { principal: "alice", application: "notes" }));
  assert.equal(store.threads.get("thread-1"), undefined);
  for (let i = 0; i <= THREAD_ROWS_CACHED; i++) assert.ok(store.threads.insert(threadFixture({ threadId: `t-${i}` })).ok);
  const first = store.threads.get("t-0");
  for (let i = 1; i <= THREAD_ROWS_CACHED; i++) store.threads.get(`t-${i}`);
  const again = store.threads.get("t-0");
  assert.notEqual(again, first, "evicted, decoded afresh");
  assert.deepEqual(again, first);
});
