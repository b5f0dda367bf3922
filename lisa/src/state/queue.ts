import type { LedgerConnection } from "./connection.ts";
import { invalidInput } from "./errors.ts";
import { INVOCATION_COLUMNS, toInvocationRow } from "./rows.ts";
import type { WorkItem } from "./types.ts";
import { isInteger } from "./validate.ts";

// Room order is FIFO: only the HEAD of a room (its oldest pending row by
// received_at_ms, then event_id) is ever actionable. A head in backoff or under
// a live lease blocks every later row of that room until it moves on, with one
// exception: a stored reply whose send FAILED and waits for its retry does not
// block, so a reply the server keeps rejecting never stalls later invocations
// of its room; it is retried when its backoff ends. For
// every pending status `available_at_ms` is the time the head becomes
// actionable: a candidate's backoff, a processing lease's expiry, a ready
// reply's send backoff or send-lease expiry.
//
// `+room_id` keeps the planner on the status index so only pending rows are
// read, not a room's whole history.

// Pending rows that can be a room's head at time ? (a failed send in backoff cannot).
const BLOCKING_SQL = `(status IN ('candidate', 'processing')
  OR (status = 'ready_to_send' AND (last_error_code IS NULL OR available_at_ms <= ?)))`;

const HEADS_SQL = `
  SELECT room_id, received_at_ms, available_at_ms FROM (
    SELECT room_id, received_at_ms, available_at_ms,
      ROW_NUMBER() OVER (PARTITION BY room_id ORDER BY received_at_ms, event_id) AS position
    FROM invocations WHERE ${BLOCKING_SQL}
  ) WHERE position = 1`;

/** Rooms whose head is actionable now, oldest head first. */
export function roomsWithWork(conn: LedgerConnection): string[] {
  return conn.read("rooms with work", (now) =>
    conn.stmt(`${HEADS_SQL} AND available_at_ms <= ? ORDER BY received_at_ms, room_id`).all(now, now)
      .map((row) => row["room_id"] as string));
}

/** Earliest future time at which a waiting room head becomes actionable. */
export function nextWakeAtMs(conn: LedgerConnection): number | null {
  return conn.read("next wake", (now) => {
    const row = conn.stmt(`SELECT MIN(available_at_ms) AS wake FROM (${HEADS_SQL} AND available_at_ms > ?)`).get(now, now);
    const wake = row?.["wake"];
    return typeof wake === "number" ? wake : null;
  });
}

/**
 * Leases the room's head if it is actionable: a ready reply is returned for
 * sending (its `available_at_ms` moves to the send-lease expiry, status stays
 * `ready_to_send`); a candidate, or a processing row whose lease expired,
 * becomes `processing` with a new lease and one more attempt.
 */
export function nextForRoom(conn: LedgerConnection, roomId: string, leaseMs: number): WorkItem | null {
  if (!isInteger(leaseMs) || leaseMs <= 0) throw invalidInput("lease duration");
  return conn.write("lease next invocation", (now) => {
    const head = conn.stmt(
      `SELECT ${INVOCATION_COLUMNS} FROM invocations WHERE ${BLOCKING_SQL} AND +room_id = ?
       ORDER BY received_at_ms, event_id LIMIT 1`,
    ).get(now, roomId);
    if (head === undefined || (head["available_at_ms"] as number) > now) return null;
    const eventId = head["event_id"] as string;
    if (head["status"] === "ready_to_send") {
      conn.stmt("UPDATE invocations SET available_at_ms = ? WHERE event_id = ?").run(now + leaseMs, eventId);
    } else {
      conn.stmt(
        `UPDATE invocations SET status = 'processing', available_at_ms = ?, attempt_count = attempt_count + 1,
         updated_at_ms = ? WHERE event_id = ?`,
      ).run(now + leaseMs, now, eventId);
    }
    const leased = conn.stmt(`SELECT ${INVOCATION_COLUMNS} FROM invocations WHERE event_id = ?`).get(eventId);
    const invocation = toInvocationRow(leased ?? head);
    return { kind: invocation.status === "ready_to_send" ? "send" : "process", invocation };
  });
}

/**
 * Makes the room's stored replies that wait for a send retry due now (issue
 * 26): a send refused while Lisa could not post waits an hour, but once the
 * room lets her send again it goes out at once, before anything newer of the
 * room, since it is the room's oldest pending row. Returns how many.
 */
export function resumeRoomSends(conn: LedgerConnection, roomId: string): number {
  return conn.write("resume room sends", (now) => Number(conn.stmt(
    `UPDATE invocations SET available_at_ms = ? WHERE status = 'ready_to_send' AND +room_id = ?
     AND last_error_code IS NOT NULL AND available_at_ms > ?`,
  ).run(now, roomId, now).changes));
}
