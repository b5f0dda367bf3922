import type { LedgerConnection } from "./connection.ts";
import { invalidInput } from "./errors.ts";
import type { ReplyStreamRow } from "./types.ts";
import { isEventId } from "./validate.ts";

// Streaming replies: which message an invocation's answer grows in and the
// highest edit sequence number reserved. A row exists from just before the first
// send, so a restart knows a message may already be in the room; its event id
// is recorded once the send (or a lookup) proved it.

function toRow(row: Record<string, unknown>): ReplyStreamRow {
  return { sentEventId: (row["sent_event_id"] as string | null) ?? null, lastSeq: row["last_seq"] as number };
}

/** The invocation's stream, or null when none was begun. */
export function readReplyStream(conn: LedgerConnection, eventId: string): ReplyStreamRow | null {
  return conn.read("read reply stream", () => {
    const row = conn.stmt("SELECT sent_event_id, last_seq FROM reply_streams WHERE invocation_event_id = ?").get(eventId);
    return row === undefined ? null : toRow(row);
  });
}

/** Records that a first send is about to go out (kept when already begun); returns the stream. */
export function beginReplyStream(conn: LedgerConnection, eventId: string): ReplyStreamRow {
  return conn.write("begin reply stream", (now) => {
    conn.stmt(`INSERT INTO reply_streams(invocation_event_id, sent_event_id, last_seq, updated_at_ms) VALUES (?, NULL, 0, ?)
      ON CONFLICT(invocation_event_id) DO NOTHING`).run(eventId, now);
    return toRow(conn.stmt("SELECT sent_event_id, last_seq FROM reply_streams WHERE invocation_event_id = ?").get(eventId) ?? {});
  });
}

/**
 * Records the message the answer grows in (the first send's event id, or one
 * found in the room) and, in the same transaction, reserves the next `reserve`
 * edit sequence numbers (0: none); returns the first number reserved. The first
 * edit follows the first send, so its numbers ride in this commit instead of a
 * commit of their own.
 */
export function setReplyStreamEvent(conn: LedgerConnection, eventId: string, sentEventId: string, reserve = 0): number {
  if (!isEventId(sentEventId)) throw invalidInput("reply stream event id");
  if (!Number.isSafeInteger(reserve) || reserve < 0 || reserve > 1_000) throw invalidInput("edit sequence reservation");
  return conn.write("set reply stream event", (now) => {
    conn.stmt(`INSERT INTO reply_streams(invocation_event_id, sent_event_id, last_seq, updated_at_ms) VALUES (?, ?, ?, ?)
      ON CONFLICT(invocation_event_id) DO UPDATE SET sent_event_id = excluded.sent_event_id, last_seq = last_seq + ?,
      updated_at_ms = excluded.updated_at_ms`)
      .run(eventId, sentEventId, reserve, now, reserve);
    const row = conn.stmt("SELECT last_seq FROM reply_streams WHERE invocation_event_id = ?").get(eventId);
    return (row?.["last_seq"] as number) - reserve + 1;
  });
}

/**
 * Reserves the next `count` edit sequence numbers durably, before any of them
 * is sent; returns the first. `last_seq` is the highest number reserved, so a
 * restart continues above every number an earlier process may have used.
 */
export function reserveEditSeqs(conn: LedgerConnection, eventId: string, count: number): number {
  if (!Number.isSafeInteger(count) || count < 1 || count > 1_000) throw invalidInput("edit sequence reservation");
  return conn.write("reserve edit sequence numbers", (now) => {
    conn.stmt("UPDATE reply_streams SET last_seq = last_seq + ?, updated_at_ms = ? WHERE invocation_event_id = ?").run(count, now, eventId);
    const row = conn.stmt("SELECT last_seq FROM reply_streams WHERE invocation_event_id = ?").get(eventId);
    if (row === undefined) throw invalidInput("edit of a reply stream that was never begun");
    return (row["last_seq"] as number) - count + 1;
  });
}
