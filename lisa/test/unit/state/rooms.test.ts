// Issue 18, ledger side: per-room conditions and alias bindings survive a
// restart, are reported by status and degrade health while they last, and
// pass the startup row validation.

import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { roomHash } from "../../../src/log/hash.ts";
import { assessHealth } from "../../../src/state/health.ts";
import { openStateStore } from "../../../src/state/store.ts";
import type { StateStore } from "../../../src/state/types.ts";
import { openRun, tempDatabase, testClock, withRawDatabase, type TestClock } from "../../support/state-fixtures.ts";

const A = "!room-a:example.org";
const ALIAS = "#lisa:example.org";
const THRESHOLDS = { syncMaxAgeMs: 300_000, readyToSendMaxAgeMs: 120_000 };

let db: ReturnType<typeof tempDatabase>;
let clock: TestClock;
let store: StateStore;

beforeEach(() => {
  db = tempDatabase();
  clock = testClock(1_700_000_100_000);
  store = openRun(db.path, clock);
  store.markSyncSuccess();
});

afterEach(() => {
  store.close();
  db.cleanup();
});

describe("LISA-ROOMS-01: room conditions in the ledger", () => {
  test("a condition is recorded once, keeps its start, shows in status and degrades health until cleared", () => {
    assert.equal(assessHealth(store.status(), THRESHOLDS).healthy, true);
    assert.equal(store.raiseRoomCondition(A, "room_encrypted"), true);
    clock.advance(5_000);
    assert.equal(store.raiseRoomCondition(A, "room_encrypted"), false, "raising again changes nothing");
    store.raiseRoomCondition(ALIAS, "room_alias_moved");
    const summary = store.status();
    assert.deepEqual(summary.roomConditions.map((c) => [c.room, c.roomHash, c.code, c.ageMs]), [
      [A, roomHash(A), "room_encrypted", 5_000],
      [ALIAS, roomHash(ALIAS), "room_alias_moved", 0],
    ]);
    const health = assessHealth(summary, THRESHOLDS);
    assert.equal(health.healthy, false);
    assert.deepEqual(health.reasons, ["room_encrypted", "room_alias_moved"]);
    assert.equal(store.clearRoomCondition(A, "room_encrypted"), true);
    assert.equal(store.clearRoomCondition(A, "room_encrypted"), false);
    assert.equal(store.pruneRoomConditions([A]), 1, "conditions of rooms no longer configured are dropped");
    assert.equal(assessHealth(store.status(), THRESHOLDS).healthy, true);
  });

  test("conditions and alias bindings survive a restart and a read-only open (lisa status)", () => {
    store.raiseRoomCondition(A, "room_send_forbidden");
    store.bindAlias(ALIAS, A);
    store.close();
    store = openRun(db.path, clock);
    assert.equal(store.aliasBinding(ALIAS), A);
    assert.deepEqual(store.roomConditions().map((c) => c.code), ["room_send_forbidden"]);
    const readonly = openStateStore(db.path, { mode: "readonly", now: clock.now });
    assert.ok(readonly.ok);
    try {
      assert.equal(readonly.value.aliasBinding(ALIAS), A);
      assert.equal(readonly.value.status().roomConditions.length, 1);
    } finally {
      readonly.value.close();
    }
    store.bindAlias(ALIAS, "!room-b:example.org");
    assert.equal(store.aliasBinding(ALIAS), "!room-b:example.org");
    assert.equal(store.pruneAliasBindings([]), 1);
    assert.equal(store.aliasBinding(ALIAS), null);
  });

  test("malformed room rows are refused at the door and by the startup validation", () => {
    assert.throws(() => store.raiseRoomCondition("room-a", "room_encrypted"), { code: "state_invalid_input" });
    assert.throws(() => store.raiseRoomCondition(A, "has spaces"), { code: "state_invalid_input" });
    assert.throws(() => store.bindAlias("lisa", A), { code: "state_invalid_input" });
    store.close();
    withRawDatabase(db.path, (raw) => raw.exec("INSERT INTO room_aliases VALUES ('#x:example.org', 'not-a-room', 1)"));
    const opened = openStateStore(db.path, { mode: "run", now: clock.now });
    assert.equal(opened.ok, false);
    if (!opened.ok) assert.equal(opened.error.code, "state_corrupt");
    withRawDatabase(db.path, (raw) => raw.exec("DELETE FROM room_aliases"));
    store = openRun(db.path, clock);
  });
});
