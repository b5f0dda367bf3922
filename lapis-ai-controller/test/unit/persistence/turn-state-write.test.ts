// A turn's state change answers the row as written without reading it again
// (P-PRF-14): the answer equals what a fresh read returns, at every step, for
// an error code kept, set and cleared, and the SELECTs per change drop by one.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { openSqliteStore, type SqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { threadFixture, turnFixture } from "../../support/fixtures.ts";
import { tempDir } from "../../support/temp.ts";

function open(path: string): SqliteStore {
  const opened = openSqliteStore({ path });
  assert.ok(opened.ok);
  return opened.value;
}

/** Counts the SELECTs on the turns table run while `work` runs. */
function turnReads<T>(store: SqliteStore, work: () => T): { value: T; reads: number } {
  const proto = Object.getPrototypeOf(store.handle.db.prepare("SELECT 1")) as { get: (...a: unknown[]) => unknown };
  const original = proto.get;
  let reads = 0;
  proto.get = function (this: { sourceSQL: string }, ...args: unknown[]) {
    if (/^SELECT \* FROM turns WHERE turn_id/.test(this.sourceSQL)) reads += 1;
    return original.apply(this, args);
  };
  try {
    return { value: work(), reads };
  } finally {
    proto.get = original;
  }
}

test("P-PRF-14 a turn's state change answers the row as written, equal to a fresh read, with one read of the row", (t) => {
  const store = open(join(tempDir(t, "aic-turn-state-"), "c.sqlite"));
  t.after(() => store.close());
  assert.ok(store.threads.insert(threadFixture()).ok);
  assert.ok(store.turns.insert(turnFixture({ errorCode: null })).ok);
  const steps: Array<[Parameters<SqliteStore["turns"]["setState"]>[1], number, string | null | undefined]> = [
    ["preparing", 2_000, undefined],
    ["dispatched", 3_000, null],
    ["running", 4_000, undefined],
    ["failed", 5_000, "provider_exited"],
  ];
  for (const [state, at, code] of steps) {
    const { value: written, reads } = turnReads(store, () => store.turns.setState("turn-1", state, at, code));
    assert.equal(reads, 1, `one read of the row for ${state}`);
    assert.ok(written.ok);
    assert.deepEqual(written.value, store.turns.get("turn-1"));
    assert.equal(written.value.state, state);
    assert.equal(written.value.updatedAt, at);
  }
  // An error code kept when none is given, cleared when null is given.
  assert.equal(store.turns.get("turn-1")?.errorCode, "provider_exited");
  // A refused transition still writes nothing and answers the same error.
  assert.deepEqual(store.turns.setState("turn-1", "queued", 6_000), { ok: false, error: { code: "turn_transition_invalid", retryable: false, where: "turns.state" } });
  assert.equal(store.turns.get("turn-1")?.updatedAt, 5_000);
});

test("P-PRF-14 a state change whose transaction rolls back leaves the row as it was", (t) => {
  const store = open(join(tempDir(t, "aic-turn-state-"), "c.sqlite"));
  t.after(() => store.close());
  assert.ok(store.threads.insert(threadFixture()).ok);
  assert.ok(store.turns.insert(turnFixture()).ok);
  const before = store.turns.get("turn-1");
  assert.throws(() => store.handle.transact(() => {
    const moved = store.turns.setState("turn-1", "preparing", 2_000);
    assert.ok(moved.ok);
    assert.deepEqual(moved.value, store.turns.get("turn-1"));
    throw new Error("rolled back");
  }), /rolled back/);
  assert.deepEqual(store.turns.get("turn-1"), before);
});

test("P-PRF-14 a row the caller read inside the open transaction is not read again; outside one, or another turn's, it is", (t) => {
  const store = open(join(tempDir(t, "aic-turn-state-"), "c.sqlite"));
  t.after(() => store.close());
  assert.ok(store.threads.insert(threadFixture()).ok);
  assert.ok(store.turns.insert(turnFixture()).ok);
  assert.ok(store.turns.insert(turnFixture({ turnId: "turn-2", commandId: "cmd-2" })).ok);
  const inside = turnReads(store, () => store.handle.transact(() => {
    const read = store.turns.get("turn-1");
    assert.ok(read);
    return store.turns.setState("turn-1", "preparing", 2_000, undefined, read);
  }));
  assert.equal(inside.reads, 1, "the caller's read only");
  assert.ok(inside.value.ok);
  assert.deepEqual(inside.value.value, store.turns.get("turn-1"));
  // Read outside a transaction: possibly stale by the time the change runs, so read again.
  const stale = store.turns.get("turn-1");
  assert.ok(stale);
  assert.ok(store.turns.setState("turn-1", "dispatched", 3_000).ok);
  const outside = turnReads(store, () => store.turns.setState("turn-1", "preparing", 4_000, undefined, stale));
  assert.equal(outside.reads, 1, "read again");
  assert.deepEqual(outside.value, { ok: false, error: { code: "turn_transition_invalid", retryable: false, where: "turns.state" } }, "judged on the row as it is, not the stale one");
  // Another turn's row is never taken for this one.
  const other = turnReads(store, () => store.handle.transact(() => store.turns.setState("turn-2", "preparing", 5_000, undefined, store.turns.get("turn-1"))));
  assert.equal(other.reads, 2);
  assert.ok(other.value.ok);
  assert.equal(other.value.value.turnId, "turn-2");
  assert.deepEqual(other.value.value, store.turns.get("turn-2"));
});
