import { errorCode } from "../errors.ts";
import type { Logger } from "../log/logger.ts";
import type { StateStore } from "../state/store.ts";
import type { SyncCounters } from "./sync-loop.ts";

/** How often the periodic summary line is written. */
export const SUMMARY_INTERVAL_MS = 60_000;

/** Writes a content-free summary line (counts, ages, sync health) every minute (design 17.3). */
export function startSummaryLog(store: Pick<StateStore, "status">, sync: SyncCounters, log: Logger, intervalMs = SUMMARY_INTERVAL_MS): { stop(): void } {
  const timer = setInterval(() => {
    try {
      const status = store.status();
      const rooms = status.rooms;
      log.info("summary", {
        sync_successes: sync.successes,
        sync_failures: sync.failures,
        sync_reconnect_delay_ms: sync.lastDelayMs,
        sync_unknown_positions: sync.unknownPositions,
        sync_cursor_age_ms: status.syncCursorAgeMs,
        candidates: status.countsByStatus.candidate,
        processing: status.countsByStatus.processing,
        send_pending: status.countsByStatus.ready_to_send,
        sent: status.countsByStatus.sent,
        ignored: status.countsByStatus.ignored,
        oldest_ready_to_send_age_ms: status.oldestReadyToSendAgeMs,
        busiest_room: rooms[0]?.roomHash ?? null,
        busiest_room_depth: rooms[0]?.queueDepth ?? 0,
        busiest_room_oldest_age_ms: rooms[0]?.oldestPendingAgeMs ?? 0,
      });
    } catch (error) {
      log.error("summary_failed", { code: errorCode(error) });
    }
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
