import { errorCode } from "../errors.ts";
import type { Logger } from "../log/logger.ts";
import type { StateStore } from "../state/store.ts";
import type { SyncCounters } from "./sync-loop.ts";
import type { EventTally } from "./tally.ts";

/** How often the periodic summary line is written. */
export const SUMMARY_INTERVAL_MS = 60_000;
/** Most per-room queue lines written with one summary. */
const MAX_ROOM_LINES = 20;

/** Writes a content-free summary line (counts, ages, sync health) every minute. */
export function startSummaryLog(
  store: Pick<StateStore, "status">, sync: SyncCounters, tally: Pick<EventTally, "drain">, log: Logger, intervalMs = SUMMARY_INTERVAL_MS,
): { stop(): void } {
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
        room_conditions: status.roomConditions.length,
        ...tally.drain(),
      });
      // Queue depth and oldest pending age per hashed room, busiest first (bounded).
      for (const room of rooms.slice(0, MAX_ROOM_LINES)) {
        log.info("room_queue", { room_id_hash: room.roomHash, queue_depth: room.queueDepth, oldest_pending_age_ms: room.oldestPendingAgeMs });
      }
      // Rooms Lisa cannot serve right now (LISA-ROOMS-01), by hashed room and code (bounded).
      for (const condition of status.roomConditions.slice(0, MAX_ROOM_LINES)) {
        log.info("room_condition_active", { room_id_hash: condition.roomHash, code: condition.code, age_ms: condition.ageMs });
      }
    } catch (error) {
      log.error("summary_failed", { code: errorCode(error) });
    }
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
