import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { startSummaryLog } from "../../../src/app/summary.ts";
import { EventTally } from "../../../src/app/tally.ts";
import { createLogger } from "../../../src/log/logger.ts";
import type { StatusSummary } from "../../../src/state/types.ts";

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger({ level: "INFO", destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
  return { lines, log };
}

const status: StatusSummary = {
  database: "present", schemaVersion: 1, generatedAtMs: 0,
  countsByStatus: { candidate: 1, processing: 0, ready_to_send: 2, sent: 5, ignored: 3 },
  oldestReadyToSendAgeMs: 1500, oldestCandidateAgeMs: 10, syncInitialized: true, lastSyncSuccessMs: 0, syncCursorAgeMs: 200,
  lastErrorCodes: [], ignoredReasons: [], rooms: [{ roomHash: "room_abc", queueDepth: 3, oldestPendingAgeMs: 1500, conditions: [] }],
  roomConditions: [{ room: "!enc:localhost", roomHash: "room_enc", code: "room_encrypted", sinceMs: 0, ageMs: 700 }],
} as unknown as StatusSummary;

describe("counters and timings through logs", () => {
  test("the tally counts events at every level, even those the level filters out, and resets after a summary", () => {
    const { lines, log } = capture();
    const tally = new EventTally();
    const counted = tally.wrap(log).child({ component: "x" });
    counted.debug("llm_request_done", { duration_ms: 40 });
    counted.warn("llm_request_failed", { code: "llm_timeout" });
    counted.info("tool_call_finished", { ok: false, code: "timeout", duration_ms: 100 });
    counted.info("tool_call_finished", { ok: true, code: "ok", duration_ms: 20 });
    counted.info("web_fetch_succeeded", { bytes: 1200, redirects: 2 });
    counted.info("invocation_answered", { duration_ms: 300 });
    counted.info("invocation_failed", { duration_ms: 100, code: "llm_unavailable" });
    const fields = tally.drain();
    assert.equal(fields["llm_requests"], 2);
    assert.equal(fields["llm_failures"], 1);
    assert.equal(fields["llm_avg_ms"], 40);
    assert.equal(fields["tool_calls"], 2);
    assert.equal(fields["tool_failures"], 1);
    assert.equal(fields["tool_timeouts"], 1);
    assert.equal(fields["web_bytes"], 1200);
    assert.equal(fields["web_redirects"], 2);
    assert.equal(fields["invocations_answered"], 1);
    assert.equal(fields["invocations_failed"], 1);
    assert.equal(fields["invocation_avg_ms"], 200);
    assert.equal(fields["invocation_max_ms"], 300);
    assert.equal(tally.drain()["tool_calls"], 0, "drain resets");
    assert.ok(lines.every((line) => line["event"] !== "llm_request_done"), "the debug line itself stays filtered");
  });

  test("the periodic summary line carries ledger counts, ages, sync health and the tally, with no content", async () => {
    const { lines, log } = capture();
    const tally = new EventTally();
    tally.wrap(log).info("invocation_sent", {});
    const sync = { successes: 4, failures: 1, lastDelayMs: 2000, unknownPositions: 0 };
    const summary = startSummaryLog({ status: () => status }, sync, tally, log, 10);
    await new Promise((resolve) => setTimeout(resolve, 50));
    summary.stop();
    const line = lines.find((l) => l["event"] === "summary");
    assert.ok(line !== undefined);
    assert.equal(line["send_pending"], 2);
    assert.equal(line["oldest_ready_to_send_age_ms"], 1500);
    assert.equal(line["sync_failures"], 1);
    assert.equal(line["busiest_room"], "room_abc");
    assert.equal(line["sent"], 5);
    assert.equal(line["invocations_sent"], 1);
    const room = lines.find((l) => l["event"] === "room_queue");
    assert.deepEqual([room?.["room_id_hash"], room?.["queue_depth"], room?.["oldest_pending_age_ms"]], ["room_abc", 3, 1500]);
    // Issue 18: per-room conditions appear in the summary, by hashed room and code only.
    assert.equal(line["room_conditions"], 1);
    const condition = lines.find((l) => l["event"] === "room_condition_active");
    assert.deepEqual([condition?.["room_id_hash"], condition?.["code"], condition?.["age_ms"]], ["room_enc", "room_encrypted", 700]);
    assert.ok(!JSON.stringify(lines).includes("!enc:localhost"), "the raw room id stays out of the log");
    console.log(`sample summary: ${JSON.stringify(line)}`);
  });
});
