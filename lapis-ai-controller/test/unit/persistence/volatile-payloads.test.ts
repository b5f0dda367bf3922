import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { openSqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { VolatilePayloads, volatileLimits } from "../../../src/persistence/volatile-payloads.ts";
import { threadFixture, turnFixture } from "../../support/fixtures.ts";
import { tempDir } from "../../support/temp.ts";

test("P-STO-09 volatile limits are validated and capped in code", () => {
  assert.deepEqual(volatileLimits(), { ok: true, value: { maxEntries: 10_000, maxChars: 64 * 1024 * 1024 } });
  assert.equal(volatileLimits({ maxEntries: 1_000_001 }).ok, false);
  assert.equal(volatileLimits({ maxChars: 0 }).ok, false);
  assert.equal(volatileLimits({ maxEntries: 1.5 }).ok, false);
});

test("P-STO-11 P-STO-15 payloads evicted past the volatile limits are reported lost, never invented", (t) => {
  const opened = openSqliteStore({ path: join(tempDir(t), "controller.sqlite"), volatile: { maxEntries: 2 } });
  assert.ok(opened.ok);
  const store = opened.value;
  t.after(() => store.close());
  assert.ok(store.threads.insert(threadFixture({ retention: "metadata-only" })).ok);
  assert.ok(store.turns.insert(turnFixture()).ok);
  for (let i = 1; i <= 3; i += 1) {
    assert.ok(store.journal.append({ threadId: "thread-1", turnId: "turn-1", visibility: "transcript", kind: "agent_message", payload: { n: i }, createdAt: i }).ok);
  }
  const replay = store.journal.replay("thread-1");
  assert.deepEqual(replay.events.map((e) => e.payloadUnavailable === true ? "lost" : e.payload), ["lost", { n: 2 }, { n: 3 }]);
  assert.equal(replay.complete, false);
  assert.equal(replay.unavailable?.code, "transcript_unavailable");
});

test("P-STO-14 volatile capture evicts oldest first by size as well as count", () => {
  const payloads = new VolatilePayloads({ maxEntries: 10, maxChars: 30 });
  payloads.put("t", 1, "a".repeat(10));
  payloads.put("t", 2, "b".repeat(10));
  payloads.put("t", 3, "c".repeat(10));
  assert.equal(payloads.get("t", 1), undefined);
  assert.equal(payloads.get("t", 3), "c".repeat(10));
  assert.equal(payloads.size, 2);
  payloads.clear();
  assert.equal(payloads.size, 0);
});
