// A journal append takes its thread's retention from the thread's kept row
// (P-PRF-16) and reads it only when the row is not kept: the same rows as
// before, payloads volatile under metadata-only, an erased thread refused.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import type { RetentionProfile } from "../../../src/domain/records.ts";
import { openSqliteStore, type SqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { lifecycleStore } from "../../../src/persistence/thread-lifecycle-store.ts";
import { threadFixture } from "../../support/fixtures.ts";
import { tempDir } from "../../support/temp.ts";

function fixture(t: TestContext, retention: RetentionProfile) {
  const opened = openSqliteStore({ path: join(tempDir(t), "controller.sqlite") });
  assert.ok(opened.ok);
  const store = opened.value;
  t.after(() => store.close());
  assert.ok(store.threads.insert(threadFixture({ retention })).ok);
  return store;
}

/** Counts the retention reads run while `work` runs. */
function retentionReads<T>(store: SqliteStore, work: () => T): { value: T; reads: number } {
  const proto = Object.getPrototypeOf(store.handle.db.prepare("SELECT 1")) as { get: (...a: unknown[]) => unknown };
  const original = proto.get;
  let reads = 0;
  proto.get = function (this: { sourceSQL: string }, ...args: unknown[]) {
    if (this.sourceSQL.startsWith("SELECT retention FROM threads")) reads += 1;
    return original.apply(this, args);
  };
  try {
    return { value: work(), reads };
  } finally {
    proto.get = original;
  }
}

const row = { threadId: "thread-1", turnId: null, visibility: "transcript" as const, kind: "text", payload: { text: "hello" }, createdAt: 1_000 };

for (const retention of ["full", "metadata-only"] as const) {
  test(`P-PRF-16 ${retention}: an append to a thread whose row is kept reads no retention, and stores the payload as before`, (t) => {
    const store = fixture(t, retention);
    const cold = retentionReads(store, () => store.journal.append(row));
    assert.equal(cold.reads, 1, "not kept yet: read");
    assert.ok(store.threads.get("thread-1"));
    const warm = retentionReads(store, () => store.journal.append(row));
    assert.equal(warm.reads, 0, "kept: not read");
    assert.ok(cold.value.ok && warm.value.ok);
    const state = retention === "full" ? "stored" : "volatile";
    assert.equal(cold.value.value.payloadState, state);
    assert.equal(warm.value.value.payloadState, state);
    const replay = store.journal.replay("thread-1");
    assert.deepEqual(replay.events.map((e) => e.payload), [{ text: "hello" }, { text: "hello" }]);
    const stored = store.handle.db.prepare("SELECT payload_state, payload FROM journal ORDER BY journal_id").all();
    assert.deepEqual(stored.map((r) => ({ ...r })), Array(2).fill(retention === "full" ? { payload_state: "stored", payload: "{\"text\":\"hello\"}" } : { payload_state: "volatile", payload: null }));
  });
}

test("P-PRF-16 an erased thread's append is refused as not_found though its row was kept", (t) => {
  const store = fixture(t, "full");
  assert.ok(store.threads.get("thread-1"));
  store.transact(() => lifecycleStore(store.handle).eraseRows("thread-1", { principal: "alice", application: "notes" }));
  assert.deepEqual(store.journal.append(row), { ok: false, error: { code: "not_found", retryable: false, where: "journal.thread" } });
  assert.deepEqual(store.journal.append({ ...row, threadId: "thread-9" }), { ok: false, error: { code: "not_found", retryable: false, where: "journal.thread" } });
});
