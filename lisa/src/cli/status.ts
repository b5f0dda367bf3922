import { resolve } from "node:path";
import { readConfigFile } from "../config/load.ts";
import { openStateStore } from "../state/store.ts";
import { assessHealth } from "../state/health.ts";
import type { StatusSummary } from "../state/types.ts";
import { EXIT } from "./exit-codes.ts";
import type { Output } from "./output.ts";

/** `lisa status`: reads the ledger read-only and reports health; exit 0 healthy, 1 degraded. */
export function statusCommand(configPath: string, json: boolean, output: Output): number {
  const parsed = readConfigFile(configPath);
  if (!parsed.ok) {
    for (const problem of parsed.error.problems) output.err(problem);
    return EXIT.config;
  }
  const { file, baseDir } = parsed.value;
  const opened = openStateStore(resolve(baseDir, file.runtime.database_path), { mode: "readonly" });
  if (!opened.ok) {
    output.err(`state database: FAILED [${opened.error.code}] ${opened.error.message}`);
    return opened.error.code === "state_schema_newer" || opened.error.code === "state_corrupt" ? EXIT.config : EXIT.failure;
  }
  const store = opened.value;
  try {
    const summary = store.status();
    const health = assessHealth(summary, {
      syncMaxAgeMs: file.runtime.health_sync_max_age_seconds * 1000,
      readyToSendMaxAgeMs: file.runtime.health_ready_to_send_max_age_seconds * 1000,
    });
    if (json) output.out(JSON.stringify({ healthy: health.healthy, reasons: health.reasons, ...summary }, null, 2));
    else {
      output.out(`health: ${health.healthy ? "healthy" : `degraded (${health.reasons.join(", ")})`}`);
      for (const line of describeSummary(summary)) output.out(line);
    }
    return health.healthy ? EXIT.ok : EXIT.failure;
  } finally {
    store.close();
  }
}

function age(ms: number | null): string {
  if (ms === null) return "none";
  return ms < 1_000 ? `${ms} ms` : ms < 120_000 ? `${(ms / 1_000).toFixed(1)} s` : `${Math.round(ms / 60_000)} min`;
}

function codes(list: readonly { code: string; count: number }[]): string {
  return list.length === 0 ? "none" : list.map((c) => `${c.code} x${c.count}`).join(", ");
}

// Operator-readable lines: counts, ages and codes only, never content.
function describeSummary(summary: StatusSummary): string[] {
  const counts = Object.entries(summary.countsByStatus).map(([status, n]) => `${n} ${status}`).join(", ");
  // Issue 26: a room's queue waits while a condition keeps Lisa from posting there.
  const waiting = (codes: readonly string[]): string => (codes.length === 0 ? "" : `, waiting on ${codes.join(", ")}`);
  const rooms = summary.rooms.map((r) => `${r.roomHash} (${r.queueDepth} pending, oldest ${age(r.oldestPendingAgeMs)}${waiting(r.conditions)})`);
  return [
    `database: ${summary.database}${summary.database === "present" ? ` (schema ${summary.schemaVersion})` : ""}`,
    `sync: ${summary.syncInitialized ? "initialized" : "not initialized"}, last success ${summary.syncCursorAgeMs === null ? "never" : `${age(summary.syncCursorAgeMs)} ago`}`,
    `invocations: ${counts}`,
    `oldest reply waiting to be sent: ${age(summary.oldestReadyToSendAgeMs)}`,
    `oldest unprocessed candidate: ${age(summary.oldestCandidateAgeMs)}`,
    `recent error codes: ${codes(summary.lastErrorCodes)}`,
    `recent ignore reasons: ${codes(summary.ignoredReasons)}`,
    `rooms with work: ${rooms.length === 0 ? "none" : rooms.join("; ")}`,
    // Issue 18: rooms Lisa cannot serve; the room is the configured id or alias, so the operator can find it.
    `room conditions: ${summary.roomConditions.length === 0 ? "none" : ""}`.trimEnd(),
    ...summary.roomConditions.map((c) => `  room ${c.room} (${c.roomHash}): ${c.code} for ${age(c.ageMs)}`),
    // LISA-E2EE-12: each room served end-to-end encrypted.
    ...(summary.encryptedRooms.length === 0 ? [] : ["encrypted rooms:"]),
    ...summary.encryptedRooms.map((r) => `  ${r.roomHash}: served ${r.served}, keys pending ${r.keysPending}, ` +
      `last decryption failure ${r.lastDecryptionFailureAgeMs === null ? "none" : `${age(r.lastDecryptionFailureAgeMs)} ago`}`),
  ];
}
