import { errorCode, StateStoreError } from "../errors.ts";
import type { SyncIngestor } from "../ingest/ingestor.ts";
import type { Logger } from "../log/logger.ts";
import { isPermanentAuthError } from "../matrix/codes.ts";
import { Backoff, sleep } from "./sleep.ts";

/** Sync reconnect backoff: first delay and cap. */
const SYNC_BACKOFF_BASE_MS = 1_000;
const SYNC_BACKOFF_MAX_MS = 60_000;

/** What the sync loop reports to its supervisor. */
export interface SyncLoopHooks {
  /** Rooms with newly committed candidates. */
  onCandidates(roomIds: readonly string[]): void;
  /** A failure the service must stop for: permanent authentication (78) or the database (1). */
  onFatal(code: string, exitStatus: number): void;
}

/** Counters of the sync loop, for the periodic summary. */
export interface SyncCounters {
  successes: number;
  failures: number;
  lastDelayMs: number;
  unknownPositions: number;
}

/**
 * The sync task: one controlled `/sync` after another,
 * each durably committed before the next; expected failures back off and
 * retry, unexpected ones are logged and the loop goes on.
 */
export async function runSyncLoop(
  ingestor: Pick<SyncIngestor, "runOnce">, hooks: SyncLoopHooks, log: Logger, signal: AbortSignal, counters: SyncCounters,
): Promise<void> {
  const backoff = new Backoff(SYNC_BACKOFF_BASE_MS, SYNC_BACKOFF_MAX_MS);
  while (!signal.aborted) {
    let delayMs: number;
    try {
      const result = await ingestor.runOnce(signal);
      if (result.ok) {
        counters.successes += 1;
        backoff.reset();
        if (result.value.kind === "batch" && result.value.roomsWithCandidates.length > 0) {
          hooks.onCandidates(result.value.roomsWithCandidates);
        }
        continue;
      }
      if (signal.aborted) return;
      const error = result.error;
      if (isPermanentAuthError(error)) {
        log.error("matrix_auth_failed", { code: error.code });
        hooks.onFatal(error.code, 78);
        return;
      }
      counters.failures += 1;
      if (error.code === "matrix_unknown_pos") {
        counters.unknownPositions += 1;
        continue; // the ingestor already reset the baseline; resync at once
      }
      delayMs = backoff.next(error.retryAfterMs ?? 0);
      log.warn("sync_failed", { code: error.code, http_status: error.httpStatus ?? 0, retry_in_ms: delayMs });
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof StateStoreError) {
        // Continuing past a database failure could duplicate or lose replies.
        log.error("state_failed", { code: error.code });
        hooks.onFatal(error.code, 1);
        return;
      }
      counters.failures += 1;
      delayMs = backoff.next();
      log.error("sync_crashed", { code: errorCode(error), retry_in_ms: delayMs });
    }
    counters.lastDelayMs = delayMs;
    if (!(await sleep(delayMs, signal))) return;
  }
}
