import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { roomHash } from "../../../src/log/hash.ts";
import { assessHealth } from "../../../src/state/health.ts";
import type { StateStore, StatusSummary } from "../../../src/state/types.ts";
import {
  baseline, candidate, ingest, openRun, replyPayload, tempDatabase, testClock, type TestClock,
} from "../../support/state-fixtures.ts";

const A = "!room-a:example.org";
const B = "!room-b:example.org";
const THRESHOLDS = { syncMaxAgeMs: 300_000, readyToSendMaxAgeMs: 120_000 };

let db: ReturnType<typeof tempDatabase>;
let clock: TestClock;
let store: StateStore;

beforeEach(() => {
  db = tempDatabase();
  clock = testClock(1_700_000_100_000);
  store = openRun(db.path, clock);
  baseline(store, [A, B]);
});

afterEach(() => {
  store.close();
  db.cleanup();
});

describe("status summary", () => {
  test("reports counts, ages, codes and hashed per-room queues without content", () => {
    ingest(store, [candidate(1), candidate(2), candidate(3, { roomId: B }), candidate(4)]);
    store.markIgnored("$event4:example.org", "before_baseline");
    const work = store.nextForRoom(B, 60_000);
    assert.ok(work !== null);
    store.commitReady(work.invocation.eventId, replyPayload("secret body"));
    store.recordSendFailure(work.invocation.eventId, "matrix_server_error", clock.now() + 1_000);
    clock.advance(30_000);
    const summary = store.status();
    assert.equal(summary.database, "present");
    assert.deepEqual(summary.countsByStatus, { candidate: 2, processing: 0, ready_to_send: 1, sent: 0, ignored: 1 });
    assert.equal(summary.oldestReadyToSendAgeMs, 30_000);
    assert.equal(summary.oldestCandidateAgeMs, clock.now() - candidate(1).receivedAtMs);
    assert.equal(summary.syncCursorAgeMs, 30_000);
    assert.deepEqual(summary.lastErrorCodes.map((c) => [c.code, c.count]), [["matrix_server_error", 1]]);
    assert.deepEqual(summary.ignoredReasons.map((c) => [c.code, c.count]), [["before_baseline", 1]]);
    assert.deepEqual(summary.rooms.map((r) => [r.roomHash, r.queueDepth]), [[roomHash(A), 2], [roomHash(B), 1]]);
    const text = JSON.stringify(summary);
    for (const content of ["secret", "example.org", "$event"]) assert.ok(!text.includes(content), content);
  });

  test("an empty ledger reports zero counts and no ages", () => {
    const summary = store.status();
    assert.deepEqual(Object.values(summary.countsByStatus), [0, 0, 0, 0, 0]);
    assert.equal(summary.oldestReadyToSendAgeMs, null);
    assert.equal(summary.oldestCandidateAgeMs, null);
    assert.deepEqual(summary.rooms, []);
  });
});

describe("health", () => {
  function summary(overrides: Partial<StatusSummary>): StatusSummary {
    return { ...store.status(), ...overrides };
  }

  test("recent sync and no stale reply is healthy", () => {
    assert.deepEqual(assessHealth(summary({ syncCursorAgeMs: 1_000 }), THRESHOLDS), { healthy: true, reasons: [] });
  });

  test("a stale or missing sync success is degraded", () => {
    assert.deepEqual(assessHealth(summary({ syncCursorAgeMs: 300_001 }), THRESHOLDS).reasons, ["sync_stale"]);
    assert.deepEqual(assessHealth(summary({ syncCursorAgeMs: null }), THRESHOLDS).reasons, ["sync_never_succeeded"]);
  });

  test("a ready reply older than the threshold is degraded", () => {
    const verdict = assessHealth(summary({ syncCursorAgeMs: 0, oldestReadyToSendAgeMs: 120_001 }), THRESHOLDS);
    assert.deepEqual(verdict, { healthy: false, reasons: ["ready_to_send_stale"] });
  });
});
