import type { DatabaseSync, SQLOutputValue } from "node:sqlite";
import { StateStoreError } from "../errors.ts";
import { STATE_ERROR_CODES } from "./errors.ts";
import { LATEST_TABLE_COLUMNS } from "./migrations.ts";
import { matrixTransactionId } from "./txn-id.ts";
import { INVOCATION_STATUSES, type InvocationStatus } from "./types.ts";

// Shape rules shared by writes and the startup check, so anything the store
// accepts also passes validation on the next start.

type Row = Record<string, SQLOutputValue>;
const CODE_PATTERN = /^[A-Za-z0-9_.:-]{1,100}$/;

/** True for a Matrix event id (`$...`). */
export function isEventId(value: unknown): value is string {
  return typeof value === "string" && value.length > 1 && value.startsWith("$");
}

/** True for a Matrix room id (`!...`). */
export function isRoomId(value: unknown): value is string {
  return typeof value === "string" && value.length > 1 && value.startsWith("!");
}

/** True for a Matrix user id (`@...`). */
export function isUserId(value: unknown): value is string {
  return typeof value === "string" && value.length > 1 && value.startsWith("@");
}

/** True for a stable, non-sensitive error or reason code. */
export function isCode(value: unknown): value is string {
  return typeof value === "string" && CODE_PATTERN.test(value);
}

/** True for an integer millisecond value or count. */
export function isInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value);
}

/** True for text that parses as a JSON object (not an array or scalar). */
export function isJsonObjectText(value: unknown): value is string {
  if (typeof value !== "string") return false;
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed);
  } catch {
    return false;
  }
}

/** True for one of the allowed invocation statuses. */
export function isInvocationStatus(value: unknown): value is InvocationStatus {
  return typeof value === "string" && (INVOCATION_STATUSES as readonly string[]).includes(value);
}

function corrupt(table: string, rowid: SQLOutputValue | undefined, rule: string): StateStoreError {
  const where = typeof rowid === "number" ? ` row ${rowid}` : "";
  return new StateStoreError(STATE_ERROR_CODES.corrupt, `state database failed validation: ${table}${where} ${rule}`);
}

/** Checks that every table has the columns of the latest schema; null when it does. */
export function validateSchema(db: DatabaseSync): StateStoreError | null {
  const columnsOf = db.prepare("SELECT name FROM pragma_table_info(?)");
  for (const [table, expected] of Object.entries(LATEST_TABLE_COLUMNS)) {
    const actual = new Set(columnsOf.all(table).map((row) => row["name"]));
    const missing = expected.filter((column) => !actual.has(column));
    if (missing.length > 0) return corrupt(table, undefined, `lacks columns ${missing.join(", ")}`);
  }
  return null;
}

/** The first rule an invocation row breaks, or null if its shape is valid. */
export function invocationRowProblem(row: Row): string | null {
  if (!isEventId(row["event_id"])) return "has an invalid event_id";
  if (!isRoomId(row["room_id"])) return "has an invalid room_id";
  if (!isUserId(row["sender_id"])) return "has an invalid sender_id";
  if (!isInvocationStatus(row["status"])) return "has an unknown status";
  if (row["matrix_txn_id"] !== matrixTransactionId(row["room_id"], row["event_id"])) return "has a wrong matrix_txn_id";
  for (const column of ["received_at_ms", "available_at_ms", "updated_at_ms", "attempt_count"]) {
    if (!isInteger(row[column])) return `has a non-integer ${column}`;
  }
  if ((row["attempt_count"] as number) < 0) return "has a negative attempt_count";
  if (row["last_error_code"] !== null && !isCode(row["last_error_code"])) return "has an invalid last_error_code";
  return statusProblem(row["status"], row);
}

function statusProblem(status: InvocationStatus, row: Row): string | null {
  const raw = row["raw_event_json"];
  const response = row["response_json"];
  const sent = row["sent_event_id"];
  switch (status) {
    case "candidate":
    case "processing":
      if (!isJsonObjectText(raw)) return `(${status}) lacks a parseable raw_event_json`;
      if (response !== null) return `(${status}) carries a response_json`;
      return sent === null ? null : `(${status}) carries a sent_event_id`;
    case "ready_to_send":
      if (!isJsonObjectText(raw)) return "(ready_to_send) lacks a parseable raw_event_json";
      if (!isJsonObjectText(response)) return "(ready_to_send) lacks a parseable response_json object";
      return sent === null ? null : "(ready_to_send) carries a sent_event_id";
    case "sent":
    case "ignored":
      if (raw !== null || response !== null) return `(${status}) still carries content`;
      if (status === "sent") return isEventId(sent) ? null : "(sent) lacks a valid sent_event_id";
      return sent === null ? null : "(ignored) carries a sent_event_id";
  }
}

function syncStateProblem(row: Row): string | null {
  const next = row["next_batch"];
  if (row["singleton"] !== 1) return "is not the singleton";
  if (row["initialized"] !== 0 && row["initialized"] !== 1) return "has an invalid initialized flag";
  if (next !== null && (typeof next !== "string" || next.length === 0)) return "has an invalid next_batch";
  if (row["initialized"] === 1 && next === null) return "is initialized without a next_batch";
  if (!isInteger(row["updated_at_ms"])) return "has a non-integer updated_at_ms";
  return row["last_success_ms"] === null || isInteger(row["last_success_ms"]) ? null : "has a non-integer last_success_ms";
}

function roomCursorProblem(row: Row): string | null {
  if (!isRoomId(row["room_id"])) return "has an invalid room_id";
  const last = row["last_timeline_event_id"];
  if (last !== null && !isEventId(last)) return "has an invalid last_timeline_event_id";
  if (row["baseline_ts_ms"] !== null && !isInteger(row["baseline_ts_ms"])) return "has a non-integer baseline_ts_ms";
  return isInteger(row["updated_at_ms"]) ? null : "has a non-integer updated_at_ms";
}

function botEventProblem(row: Row): string | null {
  if (!isEventId(row["event_id"])) return "has an invalid event_id";
  if (!isRoomId(row["room_id"])) return "has an invalid room_id";
  if (!isEventId(row["invocation_event_id"])) return "has an invalid invocation_event_id";
  if (!isInteger(row["sent_at_ms"])) return "has a non-integer sent_at_ms";
  if (row["inv_room"] !== row["room_id"]) return "does not match its invocation's room";
  if (row["inv_status"] !== "sent" || row["inv_sent"] !== row["event_id"]) return "does not match a sent invocation";
  return null;
}

/** True for a Matrix room alias (`#...`). */
export function isRoomAlias(value: unknown): value is string {
  return typeof value === "string" && value.length > 1 && value.startsWith("#");
}

function roomConditionProblem(row: Row): string | null {
  if (!isRoomId(row["room"]) && !isRoomAlias(row["room"])) return "has an invalid room";
  if (!isCode(row["code"])) return "has an invalid code";
  return isInteger(row["since_ms"]) ? null : "has a non-integer since_ms";
}

function roomAliasProblem(row: Row): string | null {
  if (!isRoomAlias(row["alias"])) return "has an invalid alias";
  if (!isRoomId(row["room_id"])) return "has an invalid room_id";
  return isInteger(row["updated_at_ms"]) ? null : "has a non-integer updated_at_ms";
}

function replyStreamProblem(row: Row): string | null {
  if (!isEventId(row["invocation_event_id"])) return "has an invalid invocation_event_id";
  if (row["sent_event_id"] !== null && !isEventId(row["sent_event_id"])) return "has an invalid sent_event_id";
  if (!isInteger(row["last_seq"]) || row["last_seq"] < 0) return "has an invalid last_seq";
  return isInteger(row["updated_at_ms"]) ? null : "has a non-integer updated_at_ms";
}

// Encrypted rooms (LISA-E2EE-02, -12): a held event is the ciphertext event as received, with its deadline.
function heldEventProblem(row: Row): string | null {
  if (!isEventId(row["event_id"]) || !isRoomId(row["room_id"]) || !isUserId(row["sender_id"])) return "has an invalid id";
  for (const column of ["received_at_ms", "held_at_ms", "deadline_ms"]) if (!isInteger(row[column])) return `has a non-integer ${column}`;
  return isJsonObjectText(row["raw_event_json"]) ? null : "lacks a parseable raw_event_json";
}

function encryptedRoomProblem(row: Row): string | null {
  if (!isRoomId(row["room_id"])) return "has an invalid room_id";
  return isInteger(row["since_ms"]) ? null : "has a non-integer since_ms";
}

const ROW_CHECKS: readonly { table: string; sql: string; problem: (row: Row) => string | null }[] = [
  { table: "sync_state", sql: "SELECT rowid AS _rowid, * FROM sync_state", problem: syncStateProblem },
  { table: "room_cursors", sql: "SELECT rowid AS _rowid, * FROM room_cursors", problem: roomCursorProblem },
  { table: "invocations", sql: "SELECT rowid AS _rowid, * FROM invocations", problem: invocationRowProblem },
  {
    table: "bot_events",
    sql: `SELECT b.rowid AS _rowid, b.*, i.room_id AS inv_room, i.status AS inv_status, i.sent_event_id AS inv_sent
          FROM bot_events b LEFT JOIN invocations i ON i.event_id = b.invocation_event_id`,
    problem: botEventProblem,
  },
  { table: "room_conditions", sql: "SELECT rowid AS _rowid, * FROM room_conditions", problem: roomConditionProblem },
  { table: "room_aliases", sql: "SELECT rowid AS _rowid, * FROM room_aliases", problem: roomAliasProblem },
  { table: "reply_streams", sql: "SELECT rowid AS _rowid, * FROM reply_streams", problem: replyStreamProblem },
  { table: "e2ee_held", sql: "SELECT rowid AS _rowid, * FROM e2ee_held", problem: heldEventProblem },
  { table: "e2ee_rooms", sql: "SELECT rowid AS _rowid, * FROM e2ee_rooms", problem: encryptedRoomProblem },
];

/**
 * Checks every retained row's shape (fail closed). The returned error names
 * the table, rowid and rule only, never row content.
 */
export function validateRows(db: DatabaseSync): StateStoreError | null {
  const versions = db.prepare("SELECT COUNT(*) AS n, MAX(version) AS top, MIN(version) AS low FROM schema_migrations").get();
  if (versions?.["n"] !== versions?.["top"] || versions?.["low"] !== 1) return corrupt("schema_migrations", undefined, "has gaps");
  for (const check of ROW_CHECKS) {
    for (const row of db.prepare(check.sql).iterate()) {
      const problem = check.problem(row);
      if (problem !== null) return corrupt(check.table, row["_rowid"], problem);
    }
  }
  return null;
}
