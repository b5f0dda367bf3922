// Encrypted rooms (LISA-E2EE-02, -05): events whose room key has not arrived
// yet, held durably beside the ledger (ciphertext only, never plaintext) until
// the key comes or their window ends, and the rooms Lisa serves encrypted,
// for `lisa status`. A held event is not an invocation row: it must not block
// its room's queue while it waits for a key.

import { roomHash } from "../log/hash.ts";
import type { LedgerConnection } from "./connection.ts";
import { invalidInput } from "./errors.ts";
import { matrixTransactionId } from "./txn-id.ts";
import type { EncryptedRoomSummary, HeldEvent, HeldInput, HeldOutcome, UndecryptableInput } from "./types.ts";
import { isCode, isEventId, isInteger, isJsonObjectText, isRoomId, isUserId } from "./validate.ts";

const INSERT_HELD = `
  INSERT INTO e2ee_held(event_id, room_id, sender_id, received_at_ms, raw_event_json, held_at_ms, deadline_ms)
  SELECT ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM invocations WHERE event_id = ?)
  ON CONFLICT(event_id) DO NOTHING`;

// An event that can never be read is recorded as ignored: never answered, never seen again as new.
const INSERT_IGNORED = `
  INSERT INTO invocations(event_id, room_id, sender_id, received_at_ms, status, raw_event_json, response_json,
    matrix_txn_id, sent_event_id, attempt_count, available_at_ms, last_error_code, updated_at_ms)
  VALUES (?, ?, ?, ?, 'ignored', NULL, NULL, ?, NULL, 0, ?, ?, ?)
  ON CONFLICT(event_id) DO NOTHING`;

const INSERT_CANDIDATE = `
  INSERT INTO invocations(event_id, room_id, sender_id, received_at_ms, status, raw_event_json, response_json,
    matrix_txn_id, sent_event_id, attempt_count, available_at_ms, last_error_code, updated_at_ms)
  VALUES (?, ?, ?, ?, 'candidate', ?, NULL, ?, NULL, 0, ?, NULL, ?)
  ON CONFLICT(event_id) DO NOTHING`;

function requireIds(input: { eventId: unknown; roomId: unknown; senderId: unknown; receivedAtMs: unknown }): void {
  if (!isEventId(input.eventId) || !isRoomId(input.roomId) || !isUserId(input.senderId)) throw invalidInput("held event id");
  if (!isInteger(input.receivedAtMs)) throw invalidInput("held event timestamp");
}

/** Inside the caller's transaction: holds events whose key is missing, records undecryptable ones as ignored. */
export function insertHeld(conn: LedgerConnection, now: number, held: readonly HeldInput[], failed: readonly UndecryptableInput[]): void {
  for (const h of held) {
    requireIds(h);
    if (!isJsonObjectText(h.rawEventJson) || !isInteger(h.deadlineMs)) throw invalidInput("held event");
    conn.stmt(INSERT_HELD).run(h.eventId, h.roomId, h.senderId, h.receivedAtMs, h.rawEventJson, now, h.deadlineMs, h.eventId);
  }
  for (const f of failed) insertIgnored(conn, now, f);
}

function insertIgnored(conn: LedgerConnection, now: number, f: UndecryptableInput): void {
  requireIds(f);
  if (!isCode(f.code)) throw invalidInput("undecryptable code");
  conn.stmt(INSERT_IGNORED).run(f.eventId, f.roomId, f.senderId, f.receivedAtMs, matrixTransactionId(f.roomId, f.eventId), now, f.code, now);
}

/** Inside the caller's transaction: redacted events are no longer held. */
export function dropHeld(conn: LedgerConnection, eventIds: readonly string[]): void {
  for (const id of eventIds) conn.stmt("DELETE FROM e2ee_held WHERE event_id = ?").run(id);
}

/** Held events, oldest first (at most `limit`). */
export function readHeld(conn: LedgerConnection, limit: number): HeldEvent[] {
  return conn.read("read held events", () =>
    conn.stmt("SELECT * FROM e2ee_held ORDER BY received_at_ms, event_id LIMIT ?").all(limit).map((row) => ({
      eventId: row["event_id"] as string,
      roomId: row["room_id"] as string,
      senderId: row["sender_id"] as string,
      receivedAtMs: row["received_at_ms"] as number,
      rawEventJson: row["raw_event_json"] as string,
      heldAtMs: row["held_at_ms"] as number,
      deadlineMs: row["deadline_ms"] as number,
    })));
}

/** One transaction: the held event leaves the hold and becomes what `outcome` says; returns whether a candidate was inserted. */
export function settleHeld(conn: LedgerConnection, held: HeldEvent, outcome: HeldOutcome): boolean {
  return conn.write("settle held event", (now) => {
    const removed = Number(conn.stmt("DELETE FROM e2ee_held WHERE event_id = ?").run(held.eventId).changes);
    if (removed === 0) return false;
    if (outcome.kind === "ignored") insertIgnored(conn, now, { ...held, code: outcome.code });
    if (outcome.kind !== "candidate") return false;
    const c = outcome.candidate;
    if (c.eventId !== held.eventId || !isJsonObjectText(c.rawEventJson)) throw invalidInput("held candidate");
    return Number(conn.stmt(INSERT_CANDIDATE).run(c.eventId, c.roomId, c.senderId, c.receivedAtMs, c.rawEventJson,
      matrixTransactionId(c.roomId, c.eventId), now, now).changes) === 1;
  });
}

/** Records whether Lisa serves `roomId` encrypted (its first time kept); a no-op when nothing changes. */
export function setEncryptedRoom(conn: LedgerConnection, roomId: string, encrypted: boolean): void {
  if (!isRoomId(roomId)) throw invalidInput("encrypted room id");
  conn.write("record encrypted room", (now) => {
    if (encrypted) conn.stmt("INSERT INTO e2ee_rooms(room_id, since_ms) VALUES (?, ?) ON CONFLICT(room_id) DO NOTHING").run(roomId, now);
    else conn.stmt("DELETE FROM e2ee_rooms WHERE room_id = ?").run(roomId);
  });
}

/** Forgets every room recorded as served encrypted (a start with encrypted rooms off serves none); returns how many. */
export function forgetEncryptedRooms(conn: LedgerConnection): number {
  return conn.write("forget encrypted rooms", () => Number(conn.stmt("DELETE FROM e2ee_rooms").run().changes));
}

/** Per encrypted room: replies sent, events waiting for a key, the last event that could not be decrypted. Content-free. */
export function summarizeEncryptedRooms(conn: LedgerConnection, now: number, decryptionCodes: readonly string[]): EncryptedRoomSummary[] {
  const codes = decryptionCodes.map(() => "?").join(", ");
  return conn.stmt(`SELECT r.room_id, r.since_ms,
      (SELECT COUNT(*) FROM invocations i WHERE i.room_id = r.room_id AND i.status = 'sent' AND i.updated_at_ms >= r.since_ms) AS served,
      (SELECT COUNT(*) FROM e2ee_held h WHERE h.room_id = r.room_id) AS pending,
      (SELECT MAX(i.updated_at_ms) FROM invocations i WHERE i.room_id = r.room_id AND i.status = 'ignored'
        AND i.last_error_code IN (${codes})) AS failed_at
    FROM e2ee_rooms r ORDER BY r.since_ms, r.room_id`).all(...decryptionCodes).map((row) => {
    const failedAt = row["failed_at"];
    return {
      roomHash: roomHash(row["room_id"] as string),
      encryptedSinceMs: row["since_ms"] as number,
      served: row["served"] as number,
      keysPending: row["pending"] as number,
      lastDecryptionFailureAgeMs: typeof failedAt === "number" ? Math.max(0, now - failedAt) : null,
    };
  });
}
