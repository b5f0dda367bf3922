import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { describe, test } from "node:test";
import { openStateStore } from "../../../src/state/store.ts";
import {
  baseline, candidate, exited, ingest, openReadonly, openRun, spawnLockHolder, databasePerTest, testClock,
} from "../../support/state-fixtures.ts";

const db = databasePerTest();
const clock = testClock();

describe("single running instance", () => {
  test("a second process opening the database for run is refused with state_locked", async (t) => {
    const holder = spawnLockHolder(db.path);
    t.after(async () => {
      holder.child.kill("SIGKILL");
      await exited(holder.child);
    });
    await holder.ready;
    const opened = openStateStore(db.path, { mode: "run", now: clock.now });
    assert.equal(opened.ok, false);
    if (!opened.ok) {
      assert.equal(opened.error.code, "state_locked");
      assert.match(opened.error.message, /another Lisa process/);
    }
  });

  test("a second run open in the same process is refused until the first closes", () => {
    const first = openRun(db.path, clock);
    const second = openStateStore(db.path, { mode: "run", now: clock.now });
    assert.equal(second.ok ? "opened" : second.error.code, "state_locked");
    first.close();
    openRun(db.path, clock).close();
  });

  test("a SIGKILLed holder releases the lock", async () => {
    const holder = spawnLockHolder(db.path);
    await holder.ready;
    holder.child.kill("SIGKILL");
    await exited(holder.child);
    const store = openRun(db.path, clock);
    store.close();
  });
});

describe("read-only inspection", () => {
  test("readonly open works while another process holds the run lock and sees its commits", async (t) => {
    const writer = openRun(db.path, clock);
    baseline(writer);
    ingest(writer, [candidate(1)]);
    writer.close();
    const holder = spawnLockHolder(db.path);
    t.after(async () => {
      holder.child.kill("SIGKILL");
      await exited(holder.child);
    });
    await holder.ready;
    const reader = openReadonly(db.path, clock);
    try {
      assert.equal(reader.mode, "readonly");
      assert.equal(reader.status().countsByStatus.candidate, 1);
      assert.equal(reader.syncState().nextBatch, "s1");
      assert.throws(() => reader.markSyncSuccess(), { code: "state_readonly" });
    } finally {
      reader.close();
    }
  });

  test("readonly open on a fresh path reports an empty state and creates nothing", () => {
    const reader = openReadonly(db.path, clock);
    try {
      const summary = reader.status();
      assert.equal(summary.database, "absent");
      assert.deepEqual(Object.values(summary.countsByStatus), [0, 0, 0, 0, 0]);
      assert.equal(reader.syncState().initialized, false);
      assert.deepEqual(reader.roomsWithWork(), []);
      assert.throws(() => reader.resetBaseline(), { code: "state_readonly" });
    } finally {
      reader.close();
    }
    assert.equal(existsSync(db.path), false);
    assert.equal(existsSync(`${db.path}.lock`), false);
  });

  test("readonly open never takes the run lock", () => {
    openRun(db.path, clock).close();
    const reader = openReadonly(db.path, clock);
    const runner = openRun(db.path, clock);
    runner.close();
    reader.close();
  });
});
