import type { StatusSummary } from "./types.ts";

/** Thresholds of the degraded state, in milliseconds. */
export interface HealthThresholds {
  readonly syncMaxAgeMs: number;
  readonly readyToSendMaxAgeMs: number;
}

/** Health verdict: healthy, or degraded with stable reason codes. */
export interface HealthAssessment {
  readonly healthy: boolean;
  readonly reasons: readonly string[];
}

/** Degraded when sync has not succeeded recently or a ready reply waits too long. */
export function assessHealth(summary: StatusSummary, thresholds: HealthThresholds): HealthAssessment {
  const reasons: string[] = [];
  if (summary.database === "absent") reasons.push("no_database");
  if (summary.syncCursorAgeMs === null) reasons.push("sync_never_succeeded");
  else if (summary.syncCursorAgeMs > thresholds.syncMaxAgeMs) reasons.push("sync_stale");
  if (summary.oldestReadyToSendAgeMs !== null && summary.oldestReadyToSendAgeMs > thresholds.readyToSendMaxAgeMs) {
    reasons.push("ready_to_send_stale");
  }
  // A room Lisa cannot serve (LISA-ROOMS-01) degrades health while it lasts.
  for (const code of new Set(summary.roomConditions.map((condition) => condition.code))) reasons.push(code);
  return { healthy: reasons.length === 0, reasons };
}
