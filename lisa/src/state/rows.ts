import type { SQLOutputValue } from "node:sqlite";
import { StateStoreError } from "../errors.ts";
import { STATE_ERROR_CODES } from "./errors.ts";
import { invocationRowProblem } from "./validate.ts";
import type { InvocationRow, InvocationStatus } from "./types.ts";

/** The invocation columns in the order every query selects them. */
export const INVOCATION_COLUMNS =
  "event_id, room_id, sender_id, received_at_ms, status, raw_event_json, response_json, matrix_txn_id, " +
  "sent_event_id, attempt_count, available_at_ms, last_error_code, updated_at_ms";

/** SQL list of the statuses that still wait for work. */
export const PENDING_SQL = "('candidate', 'processing', 'ready_to_send')";

type Row = Record<string, SQLOutputValue>;

function text(row: Row, column: string): string {
  return row[column] as string;
}

function textOrNull(row: Row, column: string): string | null {
  return (row[column] ?? null) as string | null;
}

function num(row: Row, column: string): number {
  return row[column] as number;
}

/**
 * Maps a database row to an InvocationRow, re-checking its shape: the
 * startup validation already passed, so a failure here means the file was
 * changed underneath us and the store fails closed.
 */
export function toInvocationRow(row: Row): InvocationRow {
  if (invocationRowProblem(row) !== null) {
    throw new StateStoreError(STATE_ERROR_CODES.corrupt, "state database returned a malformed invocation row");
  }
  return {
    eventId: text(row, "event_id"),
    roomId: text(row, "room_id"),
    senderId: text(row, "sender_id"),
    receivedAtMs: num(row, "received_at_ms"),
    status: text(row, "status") as InvocationStatus,
    rawEventJson: textOrNull(row, "raw_event_json"),
    responseJson: textOrNull(row, "response_json"),
    matrixTxnId: text(row, "matrix_txn_id"),
    sentEventId: textOrNull(row, "sent_event_id"),
    attemptCount: num(row, "attempt_count"),
    availableAtMs: num(row, "available_at_ms"),
    lastErrorCode: textOrNull(row, "last_error_code"),
    updatedAtMs: num(row, "updated_at_ms"),
  };
}
