// Group commit (issue 32.2): writes queued with `group` commit together in one
// transaction at the next macrotask (or when the batch is full, or inside the
// next other transaction, ahead of its writes), in arrival order; their listeners hear of them only
// after the COMMIT, when another connection can read them.
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test, type TestContext } from "node:test";
import { setImmediate } from "node:timers/promises";
import { ControllerFailure } from "../../../src/domain/errors.ts";
import { GROUP_COMMIT_LIMITS, groupCommitLimits, transactor } from "../../../src/persistence/group-commit.ts";
import { tempDir } from "../../support/temp.ts";

/** A real WAL database, the connection's COMMITs counted, and a second connection that sees only committed rows. */
function fixture(t: TestContext) {
  const path = join(tempDir(t, "aic-group-"), "g.sqlite");
  const db = new DatabaseSync(path);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = FULL");
  db.exec("CREATE TABLE rows (n INTEGER NOT NULL UNIQUE)");
  const reader = new DatabaseSync(path, { readOnly: true });
  t.after(() => { reader.close(); db.close(); });
  const stats = { commits: 0 };
  const counted = {
    exec(sql: string) {
      if (sql === "COMMIT") stats.commits += 1;
      db.exec(sql);
    },
    get isTransaction() { return db.isTransaction; },
    // Statements the runner prepares (its savepoints) run on the real connection too.
    prepare: (sql: string) => db.prepare(sql),
  } as unknown as DatabaseSync;
  const insert = db.prepare("INSERT INTO rows (n) VALUES (?)");
  const committed = (): number[] => (reader.prepare("SELECT n FROM rows ORDER BY rowid").all() as Array<{ n: number }>).map((r) => Number(r.n));
  return { db, counted, stats, insert: (n: number) => void insert.run(n), committed };
}

test("P-ARC-14 events queued in one macrotask commit in one transaction, invisible until then, listeners only after the COMMIT", async (t) => {
  const f = fixture(t);
  const runner = transactor(f.counted, { maxBatch: 64 });
  const heard: Array<{ n: number; visible: number[] }> = [];
  for (let n = 1; n <= 10; n++) runner.group(() => f.insert(n), () => heard.push({ n, visible: f.committed() }));
  assert.equal(runner.pending, 10);
  assert.deepEqual(f.committed(), [], "nothing queued is readable before its commit");
  assert.equal(f.stats.commits, 0);
  assert.equal(heard.length, 0, "no listener hears of an uncommitted event");
  await setImmediate();
  assert.equal(f.stats.commits, 1, "ten events, one commit");
  assert.equal(runner.pending, 0);
  assert.deepEqual(f.committed(), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  assert.deepEqual(heard.map((h) => h.n), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  for (const h of heard) assert.deepEqual(h.visible, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "each listener runs when another connection can read the row");
});

test("P-ARC-14 a transaction takes the queue into its own COMMIT, ahead of its writes: a state change or receipt is never durable before the events that came before it", async (t) => {
  const f = fixture(t);
  const runner = transactor(f.counted, { maxBatch: 64 });
  const heard: number[] = [];
  runner.group(() => f.insert(1), () => heard.push(1));
  runner.group(() => f.insert(2), () => heard.push(2));
  const seenInside = runner.transact(() => {
    // Inside the receipt's transaction nothing is committed yet: the events and the receipt become durable together.
    const visible = f.committed();
    f.insert(3);
    return { visible, heard: [...heard] };
  });
  assert.deepEqual(seenInside, { visible: [], heard: [] }, "no listener hears of the events before the one COMMIT");
  assert.deepEqual(heard, [1, 2]);
  assert.deepEqual(f.committed(), [1, 2, 3], "the events come first, in arrival order");
  assert.equal(f.stats.commits, 1, "events and receipt: one commit");
  assert.equal(runner.pending, 0);
  // An explicit barrier (before an answer to the agent or a tool call) commits the queue alone.
  runner.group(() => f.insert(4), () => heard.push(4));
  runner.flush();
  assert.deepEqual(f.committed(), [1, 2, 3, 4]);
  assert.deepEqual(heard, [1, 2, 4]);
  runner.flush();
  assert.equal(f.stats.commits, 2, "an empty queue commits nothing");
  await setImmediate();
  assert.equal(f.stats.commits, 2, "the deferred flush finds nothing left");
});

test("P-ARC-14 a transaction whose own work fails still commits the events queued before it, alone, and tells their listeners", async (t) => {
  const f = fixture(t);
  const runner = transactor(f.counted, { maxBatch: 64 });
  const heard: number[] = [];
  runner.group(() => f.insert(1), () => heard.push(1));
  runner.group(() => f.insert(2), () => heard.push(2));
  assert.throws(() => runner.transact(() => {
    f.insert(3);
    runner.group(() => f.insert(4), () => heard.push(4));
    throw new Error("the work failed");
  }), /the work failed/);
  assert.deepEqual(f.committed(), [1, 2], "the work and what joined it rolled back; the earlier events committed");
  assert.deepEqual(heard, [1, 2]);
  assert.equal(runner.pending, 0);
  assert.equal(f.stats.commits, 1);
  await setImmediate();
  assert.equal(f.stats.commits, 1, "nothing left for the deferred flush");
});

test("P-ARC-14 the batch is bounded: a full batch commits at once; maxBatch 1 commits every event alone", async (t) => {
  const f = fixture(t);
  const runner = transactor(f.counted, { maxBatch: 3 });
  for (let n = 1; n <= 7; n++) runner.group(() => f.insert(n), () => {});
  assert.equal(f.stats.commits, 2, "two full batches of three");
  assert.deepEqual(f.committed(), [1, 2, 3, 4, 5, 6]);
  await setImmediate();
  assert.deepEqual(f.committed(), [1, 2, 3, 4, 5, 6, 7]);
  assert.equal(f.stats.commits, 3);
  const single = transactor(f.counted, { maxBatch: 1 });
  single.group(() => f.insert(8), () => {});
  assert.deepEqual(f.committed().slice(-1), [8], "committed before group() returned");
  assert.equal(f.stats.commits, 4);
});

test("P-ARC-14 an item the rules refuse is dropped alone; a storage error keeps the batch queued in order and fails the next transaction", async (t) => {
  const f = fixture(t);
  const runner = transactor(f.counted, { maxBatch: 64 });
  const heard: number[] = [];
  runner.group(() => f.insert(1), () => heard.push(1));
  runner.group(() => { f.insert(2); throw new ControllerFailure({ code: "invalid_params", retryable: false }); }, () => heard.push(2));
  runner.group(() => f.insert(3), () => heard.push(3));
  await setImmediate();
  assert.deepEqual(f.committed(), [1, 3], "the refused item is rolled back to its savepoint, the others commit");
  assert.deepEqual(heard, [1, 3]);
  // A storage failure (here a UNIQUE violation standing for a failing disk): nothing of the batch commits.
  runner.group(() => f.insert(4), () => heard.push(4));
  runner.group(() => f.insert(1), () => heard.push(-1));
  await setImmediate();
  assert.deepEqual(f.committed(), [1, 3]);
  assert.equal(runner.pending, 2, "still queued, in order");
  assert.throws(() => runner.transact(() => f.insert(5)), /UNIQUE/, "nothing after the failed events commits first");
  assert.deepEqual(f.committed(), [1, 3]);
  assert.deepEqual(heard, [1, 3]);
});

test("P-ARC-14 inside a transaction a grouped event joins it; its listener waits for that commit and never hears of a rollback", (t) => {
  const f = fixture(t);
  const runner = transactor(f.counted, { maxBatch: 64 });
  const heard: string[] = [];
  runner.transact(() => {
    runner.group(() => f.insert(1), () => heard.push(`one:${f.committed().join(",")}`));
    assert.deepEqual(heard, []);
  });
  assert.deepEqual(heard, ["one:1"]);
  assert.throws(() => runner.transact(() => {
    runner.group(() => f.insert(2), () => heard.push("two"));
    throw new Error("rolled back");
  }), /rolled back/);
  assert.deepEqual(heard, ["one:1"]);
  assert.deepEqual(f.committed(), [1]);
  assert.equal(runner.pending, 0);
});

test("P-ARC-14 the batch size is configurable and capped", () => {
  assert.deepEqual(groupCommitLimits(), { ok: true, value: { maxBatch: GROUP_COMMIT_LIMITS.maxBatch } });
  assert.deepEqual(groupCommitLimits({ maxBatch: 1 }), { ok: true, value: { maxBatch: 1 } });
  assert.deepEqual(groupCommitLimits({ maxBatch: GROUP_COMMIT_LIMITS.maxBatchCeiling }), { ok: true, value: { maxBatch: 1024 } });
  for (const bad of [0, -1, 1.5, 1025, "8", null]) assert.deepEqual(groupCommitLimits({ maxBatch: bad }), { ok: false, where: "storage.groupCommitMax" }, String(bad));
});
