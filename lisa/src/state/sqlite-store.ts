import type { LedgerConnection } from "./connection.ts";
import type { InstanceLock } from "./lock.ts";
import { invalidInput, invalidTransition, STATE_ERROR_CODES } from "./errors.ts";
import { nextForRoom, nextWakeAtMs, resumeRoomSends, roomsWithWork } from "./queue.ts";
import { INVOCATION_COLUMNS, PENDING_SQL, toInvocationRow } from "./rows.ts";
import * as held from "./held.ts";
import * as rooms from "./rooms.ts";
import * as streams from "./streams.ts";
import { summarizeStatus } from "./status.ts";
import { matrixTransactionId } from "./txn-id.ts";
import type {
  BaselineInput, HeldEvent, HeldOutcome, InvocationRow, InvocationStatus, ReplyStreamRow, RoomConditionRow, RoomCursorView, StateStore, StateStoreMode, StatusSummary,
  SyncBatchInput, SyncStateView, WorkItem,
} from "./types.ts";
import { isCode, isEventId, isInteger, isJsonObjectText, isRoomId, isUserId } from "./validate.ts";
import { StateStoreError } from "../errors.ts";

const UPSERT_SYNC_POSITION = `
  INSERT INTO sync_state(singleton, next_batch, initialized, updated_at_ms, last_success_ms) VALUES (1, ?, 1, ?, ?)
  ON CONFLICT(singleton) DO UPDATE SET next_batch = excluded.next_batch, initialized = 1,
    updated_at_ms = excluded.updated_at_ms, last_success_ms = excluded.last_success_ms`;

const INSERT_CANDIDATE = `
  INSERT INTO invocations(event_id, room_id, sender_id, received_at_ms, status, raw_event_json, response_json,
    matrix_txn_id, sent_event_id, attempt_count, available_at_ms, last_error_code, updated_at_ms)
  VALUES (?, ?, ?, ?, 'candidate', ?, NULL, ?, NULL, 0, ?, NULL, ?)
  ON CONFLICT(event_id) DO NOTHING`;

// Only a candidate not yet leased is retracted; content is cleared as for any ignored row.
const RETRACT_CANDIDATE = `
  UPDATE invocations SET status = 'ignored', last_error_code = 'redacted', raw_event_json = NULL, response_json = NULL,
    updated_at_ms = ? WHERE event_id = ? AND status = 'candidate'`;

// A null event id or baseline never erases what the cursor already knows.
const UPSERT_ROOM_CURSOR = `
  INSERT INTO room_cursors(room_id, last_timeline_event_id, updated_at_ms, baseline_ts_ms) VALUES (?, ?, ?, ?)
  ON CONFLICT(room_id) DO UPDATE SET
    last_timeline_event_id = COALESCE(excluded.last_timeline_event_id, room_cursors.last_timeline_event_id),
    baseline_ts_ms = COALESCE(excluded.baseline_ts_ms, room_cursors.baseline_ts_ms),
    updated_at_ms = excluded.updated_at_ms`;

const CLEAR_CONTENT = "raw_event_json = NULL, response_json = NULL";

function requireToken(value: unknown, what: string): string {
  if (typeof value !== "string" || value.length === 0) throw invalidInput(what);
  return value;
}

function requireTimelineEventId(value: unknown): string | null {
  if (value !== null && !isEventId(value)) throw invalidInput("room cursor event id");
  return value;
}

/** The SQLite-backed StateStore; built by `openStateStore`. */
export class SqliteStateStore implements StateStore {
  /** The mode this store was opened in. */
  readonly mode: StateStoreMode;
  readonly #conn: LedgerConnection;
  readonly #meta: { databaseExists: boolean; schemaVersion: number };

  constructor(conn: LedgerConnection, mode: StateStoreMode, meta: { databaseExists: boolean; schemaVersion: number }) {
    this.#conn = conn;
    this.mode = mode;
    this.#meta = meta;
  }

  syncState(): SyncStateView {
    return this.#conn.read("read sync state", () => {
      const row = this.#conn.stmt("SELECT * FROM sync_state WHERE singleton = 1").get();
      if (row === undefined) return { nextBatch: null, initialized: false, updatedAtMs: 0, lastSuccessMs: null };
      return {
        nextBatch: (row["next_batch"] ?? null) as string | null,
        initialized: row["initialized"] === 1,
        updatedAtMs: row["updated_at_ms"] as number,
        lastSuccessMs: (row["last_success_ms"] ?? null) as number | null,
      };
    });
  }

  roomCursor(roomId: string): RoomCursorView | null {
    return this.#conn.read("read room cursor", () => {
      const row = this.#conn.stmt("SELECT * FROM room_cursors WHERE room_id = ?").get(roomId);
      if (row === undefined) return null;
      return {
        lastTimelineEventId: (row["last_timeline_event_id"] ?? null) as string | null,
        baselineTsMs: (row["baseline_ts_ms"] ?? null) as number | null,
        updatedAtMs: row["updated_at_ms"] as number,
      };
    });
  }

  commitBaseline(input: BaselineInput): void {
    const nextBatch = requireToken(input.nextBatch, "next_batch");
    this.#conn.write("commit baseline", (now) => {
      this.#conn.stmt("DELETE FROM room_cursors").run();
      for (const room of input.rooms) {
        if (!isRoomId(room.roomId)) throw invalidInput("baseline room id");
        if (!isInteger(room.baselineTsMs)) throw invalidInput("baseline timestamp");
        const last = requireTimelineEventId(room.lastTimelineEventId);
        // A new baseline (e.g. after M_UNKNOWN_POS) must not turn invocations
        // already recorded by an incremental sync into "history".
        const oldest = this.#conn.stmt(
          `SELECT MIN(received_at_ms) AS oldest FROM invocations WHERE room_id = ? AND status IN ${PENDING_SQL}`,
        ).get(room.roomId)?.["oldest"];
        const baseline = typeof oldest === "number" ? Math.min(oldest, room.baselineTsMs) : room.baselineTsMs;
        this.#conn.stmt(UPSERT_ROOM_CURSOR).run(room.roomId, last, now, baseline);
      }
      this.#conn.stmt(UPSERT_SYNC_POSITION).run(nextBatch, now, now);
    });
  }

  commitSyncBatch(input: SyncBatchInput): { inserted: string[] } {
    const nextBatch = requireToken(input.nextBatch, "next_batch");
    return this.#conn.write("commit sync batch", (now) => {
      const position = this.#conn.stmt("SELECT initialized FROM sync_state WHERE singleton = 1").get();
      if (position?.["initialized"] !== 1) throw invalidTransition("commitSyncBatch", "uninitialized (no baseline)");
      const inserted: string[] = [];
      for (const c of input.candidates) {
        if (!isEventId(c.eventId) || !isRoomId(c.roomId) || !isUserId(c.senderId)) throw invalidInput("candidate id");
        if (!isInteger(c.receivedAtMs)) throw invalidInput("candidate timestamp");
        if (!isJsonObjectText(c.rawEventJson)) throw invalidInput("candidate raw event");
        const txnId = matrixTransactionId(c.roomId, c.eventId);
        const result = this.#conn.stmt(INSERT_CANDIDATE)
          .run(c.eventId, c.roomId, c.senderId, c.receivedAtMs, c.rawEventJson, txnId, now, now);
        if (result.changes === 1) inserted.push(c.eventId);
      }
      // A candidate redacted before it was processed is no longer an invocation.
      for (const redacted of input.redactedEventIds ?? []) {
        if (!isEventId(redacted)) throw invalidInput("redacted event id");
        this.#conn.stmt(RETRACT_CANDIDATE).run(now, redacted);
      }
      held.dropHeld(this.#conn, input.redactedEventIds ?? []);
      held.insertHeld(this.#conn, now, input.held ?? [], input.undecryptable ?? []);
      for (const room of input.rooms) {
        if (!isRoomId(room.roomId)) throw invalidInput("room cursor room id");
        if (room.baselineTsMs !== undefined && !isInteger(room.baselineTsMs)) throw invalidInput("baseline timestamp");
        const last = requireTimelineEventId(room.lastTimelineEventId);
        this.#conn.stmt(UPSERT_ROOM_CURSOR).run(room.roomId, last, now, room.baselineTsMs ?? null);
      }
      this.#conn.stmt(UPSERT_SYNC_POSITION).run(nextBatch, now, now);
      return { inserted };
    });
  }

  heldEvents(limit: number): HeldEvent[] {
    return held.readHeld(this.#conn, limit);
  }

  settleHeld(event: HeldEvent, outcome: HeldOutcome): boolean {
    return held.settleHeld(this.#conn, event, outcome);
  }

  setEncryptedRoom(roomId: string, encrypted: boolean): void {
    held.setEncryptedRoom(this.#conn, roomId, encrypted);
  }

  forgetEncryptedRooms(): number {
    return held.forgetEncryptedRooms(this.#conn);
  }

  markSyncSuccess(): void {
    this.#conn.write("mark sync success", (now) => {
      this.#conn.stmt(
        `INSERT INTO sync_state(singleton, next_batch, initialized, updated_at_ms, last_success_ms) VALUES (1, NULL, 0, ?, ?)
         ON CONFLICT(singleton) DO UPDATE SET last_success_ms = excluded.last_success_ms`,
      ).run(now, now);
    });
  }

  resetBaseline(): void {
    this.#conn.write("reset baseline", (now) => {
      this.#conn.stmt(
        `INSERT INTO sync_state(singleton, next_batch, initialized, updated_at_ms, last_success_ms) VALUES (1, NULL, 0, ?, NULL)
         ON CONFLICT(singleton) DO UPDATE SET next_batch = NULL, initialized = 0, updated_at_ms = excluded.updated_at_ms`,
      ).run(now);
    });
  }

  roomsWithWork(): string[] {
    return roomsWithWork(this.#conn);
  }

  nextWakeAtMs(): number | null {
    return nextWakeAtMs(this.#conn);
  }

  nextForRoom(roomId: string, leaseMs: number): WorkItem | null {
    return nextForRoom(this.#conn, roomId, leaseMs);
  }

  resumeRoomSends(roomId: string): number {
    return resumeRoomSends(this.#conn, roomId);
  }

  markIgnored(eventId: string, reasonCode: string): void {
    if (!isCode(reasonCode)) throw invalidInput("ignore reason code");
    this.#transition("markIgnored", eventId, ["candidate", "processing"], (now) => {
      this.#conn.stmt(`UPDATE invocations SET status = 'ignored', ${CLEAR_CONTENT}, last_error_code = ?,
        updated_at_ms = ? WHERE event_id = ?`).run(reasonCode, now, eventId);
    });
  }

  commitReady(eventId: string, responseJson: string, errorCode?: string): void {
    if (!isJsonObjectText(responseJson)) throw invalidInput("response payload");
    if (errorCode !== undefined && !isCode(errorCode)) throw invalidInput("error code");
    this.#transition("commitReady", eventId, ["processing"], (now) => {
      this.#conn.stmt(`UPDATE invocations SET status = 'ready_to_send', response_json = ?, available_at_ms = ?,
        last_error_code = COALESCE(?, last_error_code), updated_at_ms = ? WHERE event_id = ?`)
        .run(responseJson, now, errorCode ?? null, now, eventId);
    });
  }

  discardReady(eventId: string, reasonCode: string): void {
    if (!isCode(reasonCode)) throw invalidInput("discard reason code");
    this.#transition("discardReady", eventId, ["ready_to_send"], (now) => {
      this.#conn.stmt(`UPDATE invocations SET status = 'ignored', ${CLEAR_CONTENT}, last_error_code = ?,
        updated_at_ms = ? WHERE event_id = ?`).run(reasonCode, now, eventId);
    });
  }

  markSent(eventId: string, sentEventId: string): void {
    if (!isEventId(sentEventId)) throw invalidInput("sent event id");
    this.#conn.write("mark sent", (now) => {
      const row = this.#row(eventId);
      if (row.status === "sent" && row.sentEventId === sentEventId) return;
      if (row.status !== "ready_to_send") throw invalidTransition("markSent", row.status);
      this.#conn.stmt(`UPDATE invocations SET status = 'sent', sent_event_id = ?, ${CLEAR_CONTENT}, updated_at_ms = ?
        WHERE event_id = ?`).run(sentEventId, now, eventId);
      this.#conn.stmt("INSERT INTO bot_events(event_id, room_id, invocation_event_id, sent_at_ms) VALUES (?, ?, ?, ?)")
        .run(sentEventId, row.roomId, eventId, now);
    });
  }

  recordSendFailure(eventId: string, code: string, retryAtMs: number): void {
    if (!isCode(code)) throw invalidInput("send failure code");
    if (!isInteger(retryAtMs)) throw invalidInput("retry time");
    this.#transition("recordSendFailure", eventId, ["ready_to_send"], () => {
      this.#conn.stmt("UPDATE invocations SET last_error_code = ?, available_at_ms = ? WHERE event_id = ?")
        .run(code, retryAtMs, eventId);
    });
  }

  releaseLease(eventId: string, code?: string, retryAtMs?: number): boolean {
    if (code !== undefined && !isCode(code)) throw invalidInput("release code");
    if (retryAtMs !== undefined && !isInteger(retryAtMs)) throw invalidInput("retry time");
    return this.#conn.write("release lease", (now) => {
      const row = this.#row(eventId);
      if (row.status === "ready_to_send" || row.status === "sent" || row.status === "ignored") return false;
      if (row.status !== "processing") throw invalidTransition("releaseLease", row.status);
      this.#conn.stmt(`UPDATE invocations SET status = 'candidate', available_at_ms = ?,
        last_error_code = COALESCE(?, last_error_code), updated_at_ms = ? WHERE event_id = ?`)
        .run(retryAtMs ?? now, code ?? null, now, eventId);
      return true;
    });
  }

  recoverExpiredLeases(): number {
    return this.#conn.write("recover expired leases", (now) => Number(this.#conn.stmt(
      `UPDATE invocations SET status = 'candidate', available_at_ms = ?, updated_at_ms = ?
       WHERE status = 'processing' AND available_at_ms <= ?`,
    ).run(now, now, now).changes));
  }

  requeueAllOnStartup(): { candidates: number; ready: number } {
    return this.#conn.write("requeue on startup", (now) => {
      const candidates = this.#conn.stmt(`UPDATE invocations SET status = 'candidate', available_at_ms = ?,
        updated_at_ms = ? WHERE status = 'processing'`).run(now, now).changes;
      const ready = this.#conn.stmt("UPDATE invocations SET available_at_ms = ? WHERE status = 'ready_to_send'")
        .run(now).changes;
      return { candidates: Number(candidates), ready: Number(ready) };
    });
  }

  isBotEvent(eventId: string, roomId: string): boolean {
    return this.#conn.read("look up bot event", () =>
      this.#conn.stmt("SELECT 1 AS found FROM bot_events WHERE event_id = ? AND room_id = ?").get(eventId, roomId) !== undefined);
  }

  invocation(eventId: string): InvocationRow | null {
    return this.#conn.read("read invocation", () => {
      const row = this.#conn.stmt(`SELECT ${INVOCATION_COLUMNS} FROM invocations WHERE event_id = ?`).get(eventId);
      return row === undefined ? null : toInvocationRow(row);
    });
  }

  status(): StatusSummary {
    return summarizeStatus(this.#conn, this.#meta);
  }

  roomConditions(): RoomConditionRow[] {
    return rooms.readRoomConditions(this.#conn);
  }

  raiseRoomCondition(room: string, code: string): boolean {
    return rooms.raiseRoomCondition(this.#conn, room, code);
  }

  clearRoomCondition(room: string, code: string): boolean {
    return rooms.clearRoomCondition(this.#conn, room, code);
  }

  pruneRoomConditions(keep: readonly string[]): number {
    return rooms.pruneRoomConditions(this.#conn, keep);
  }

  aliasBinding(alias: string): string | null {
    return rooms.readAliasBinding(this.#conn, alias);
  }

  bindAlias(alias: string, roomId: string): void {
    rooms.writeAliasBinding(this.#conn, alias, roomId);
  }

  pruneAliasBindings(keep: readonly string[]): number {
    return rooms.pruneAliasBindings(this.#conn, keep);
  }

  replyStream(eventId: string): ReplyStreamRow | null {
    return streams.readReplyStream(this.#conn, eventId);
  }

  beginReplyStream(eventId: string): ReplyStreamRow {
    return streams.beginReplyStream(this.#conn, eventId);
  }

  setReplyStreamEvent(eventId: string, sentEventId: string, reserveSeqs?: number): number {
    return streams.setReplyStreamEvent(this.#conn, eventId, sentEventId, reserveSeqs);
  }

  reserveEditSeqs(eventId: string, count: number): number {
    return streams.reserveEditSeqs(this.#conn, eventId, count);
  }

  instanceLock(): InstanceLock | null {
    return this.#conn.lock;
  }

  close(): void {
    this.#conn.close();
  }

  // Reads the row inside the caller's transaction; a missing row is a caller bug.
  #row(eventId: string): InvocationRow {
    const row = this.#conn.stmt(`SELECT ${INVOCATION_COLUMNS} FROM invocations WHERE event_id = ?`).get(eventId);
    if (row === undefined) throw new StateStoreError(STATE_ERROR_CODES.notFound, "no invocation with that event id");
    return toInvocationRow(row);
  }

  #transition(operation: string, eventId: string, from: readonly InvocationStatus[], apply: (now: number) => void): void {
    this.#conn.write(operation, (now) => {
      const row = this.#row(eventId);
      if (!from.includes(row.status)) throw invalidTransition(operation, row.status);
      apply(now);
    });
  }
}
