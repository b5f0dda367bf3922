import { roomHash } from "../log/hash.ts";
import type { LedgerConnection } from "./connection.ts";
import { summarizeEncryptedRooms } from "./held.ts";
import { readRoomConditions } from "./rooms.ts";
import { PENDING_SQL } from "./rows.ts";
import { type ErrorCodeCount, INVOCATION_STATUSES, type InvocationStatus, type StatusSummary } from "./types.ts";

/** How far back `lastErrorCodes` and `ignoredReasons` look. */
export const STATUS_ERROR_WINDOW_MS = 24 * 60 * 60 * 1000;
/** Most distinct codes each of those lists. */
export const STATUS_MAX_ERROR_CODES = 20;

function ageSince(now: number, then: unknown): number | null {
  return typeof then === "number" ? Math.max(0, now - then) : null;
}

/** The ignore code of an encrypted event Lisa could not decrypt (at once, or when its key did not come in time). */
export const DECRYPTION_FAILED_CODE = "decryption_failed";

/** Builds the content-free status summary in one read. */
export function summarizeStatus(
  conn: LedgerConnection,
  meta: { databaseExists: boolean; schemaVersion: number },
): StatusSummary {
  return conn.read("summarize status", (now) => {
    const counts = Object.fromEntries(INVOCATION_STATUSES.map((s) => [s, 0])) as Record<InvocationStatus, number>;
    for (const row of conn.stmt("SELECT status, COUNT(*) AS n FROM invocations GROUP BY status").all()) {
      counts[row["status"] as InvocationStatus] = row["n"] as number;
    }
    const oldest = conn.stmt(`SELECT
        (SELECT MIN(updated_at_ms) FROM invocations WHERE status = 'ready_to_send') AS ready_since,
        (SELECT MIN(received_at_ms) FROM invocations WHERE status = 'candidate') AS candidate_since`).get();
    const sync = conn.stmt("SELECT initialized, last_success_ms FROM sync_state WHERE singleton = 1").get();
    const recentCodes = (ignored: 0 | 1): ErrorCodeCount[] => conn.stmt(
      `SELECT last_error_code AS code, COUNT(*) AS n, MAX(updated_at_ms) AS last FROM invocations
       WHERE last_error_code IS NOT NULL AND updated_at_ms >= ? AND (status = 'ignored') = ?
       GROUP BY last_error_code ORDER BY last DESC, code LIMIT ?`,
    ).all(now - STATUS_ERROR_WINDOW_MS, ignored, STATUS_MAX_ERROR_CODES).map((row) => ({
      code: row["code"] as string,
      count: row["n"] as number,
      lastAtMs: row["last"] as number,
    }));
    const rooms = conn.stmt(
      `SELECT room_id, COUNT(*) AS n, MIN(received_at_ms) AS oldest FROM invocations
       WHERE status IN ${PENDING_SQL} GROUP BY room_id ORDER BY oldest`,
    ).all();
    const conditions = readRoomConditions(conn);
    const lastSuccess = sync?.["last_success_ms"];
    return {
      database: meta.databaseExists ? "present" : "absent",
      schemaVersion: meta.schemaVersion,
      generatedAtMs: now,
      countsByStatus: counts,
      oldestReadyToSendAgeMs: ageSince(now, oldest?.["ready_since"]),
      oldestCandidateAgeMs: ageSince(now, oldest?.["candidate_since"]),
      syncInitialized: sync?.["initialized"] === 1,
      lastSyncSuccessMs: typeof lastSuccess === "number" ? lastSuccess : null,
      syncCursorAgeMs: ageSince(now, lastSuccess),
      lastErrorCodes: recentCodes(0),
      ignoredReasons: recentCodes(1),
      rooms: rooms.map((row) => ({
        roomHash: roomHash(row["room_id"] as string),
        queueDepth: row["n"] as number,
        oldestPendingAgeMs: ageSince(now, row["oldest"]) ?? 0,
        conditions: conditions.filter((c) => c.room === row["room_id"]).map((c) => c.code),
      })),
      roomConditions: conditions.map((row) => ({
        room: row.room,
        roomHash: roomHash(row.room),
        code: row.code,
        sinceMs: row.sinceMs,
        ageMs: ageSince(now, row.sinceMs) ?? 0,
      })),
      encryptedRooms: summarizeEncryptedRooms(conn, now, [DECRYPTION_FAILED_CODE]),
    };
  });
}
