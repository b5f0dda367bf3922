import { StateStoreError } from "../errors.ts";

// Primary SQLite result codes (extended codes carry them in the low byte).
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
const SQLITE_READONLY = 8;
const SQLITE_IOERR = 10;
const SQLITE_CORRUPT = 11;
const SQLITE_FULL = 13;
const SQLITE_CANTOPEN = 14;
const SQLITE_CONSTRAINT = 19;
const SQLITE_NOTADB = 26;

/** Stable codes of state-store failures. */
export const STATE_ERROR_CODES = {
  locked: "state_locked",
  schemaNewer: "state_schema_newer",
  schemaOutdated: "state_schema_outdated",
  corrupt: "state_corrupt",
  openFailed: "state_open_failed",
  busy: "state_busy",
  diskFull: "state_disk_full",
  ioFailed: "state_io_failed",
  constraint: "state_constraint",
  writeFailed: "state_write_failed",
  readonly: "state_readonly",
  closed: "state_closed",
  invalidTransition: "state_invalid_transition",
  invalidInput: "state_invalid_input",
  notFound: "state_not_found",
} as const;

/** The SQLite primary result code of a node:sqlite error, or null for any other value. */
export function sqlitePrimaryCode(error: unknown): number | null {
  const errcode = (error as { errcode?: unknown } | null)?.errcode;
  return typeof errcode === "number" ? errcode & 0xff : null;
}

/**
 * Maps a database failure to a payload-free StateStoreError; Lisa's own
 * StateStoreErrors pass through unchanged. `action` names what failed.
 */
export function toStateError(error: unknown, action: string): StateStoreError {
  if (error instanceof StateStoreError) return error;
  const primary = sqlitePrimaryCode(error);
  // Node file-system errors (EACCES, ENOENT, ...) carry a syscall, not an errcode.
  const code = primary === null && isSystemError(error) ? STATE_ERROR_CODES.ioFailed : codeOf(primary);
  const retryable = primary === SQLITE_BUSY || primary === SQLITE_LOCKED || primary === SQLITE_IOERR || primary === SQLITE_FULL;
  // The errno name (ENOENT, EACCES) tells an operator what to fix and carries no content.
  const errno = (error as { code?: unknown } | null)?.code;
  const detail = isSystemError(error) && typeof errno === "string" ? `: ${errno}` : "";
  return new StateStoreError(code, `state database ${action} failed (${code}${detail})`, { retryable, cause: error });
}

function isSystemError(error: unknown): boolean {
  return typeof (error as { syscall?: unknown } | null)?.syscall === "string";
}

function codeOf(primary: number | null): string {
  switch (primary) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return STATE_ERROR_CODES.busy;
    case SQLITE_FULL:
      return STATE_ERROR_CODES.diskFull;
    case SQLITE_IOERR:
      return STATE_ERROR_CODES.ioFailed;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return STATE_ERROR_CODES.corrupt;
    case SQLITE_CANTOPEN:
      return STATE_ERROR_CODES.openFailed;
    case SQLITE_READONLY:
      return STATE_ERROR_CODES.readonly;
    case SQLITE_CONSTRAINT:
      return STATE_ERROR_CODES.constraint;
    default:
      return STATE_ERROR_CODES.writeFailed;
  }
}

/** A bug: an operation asked for a status change the lifecycle does not allow. */
export function invalidTransition(operation: string, from: string): StateStoreError {
  return new StateStoreError(STATE_ERROR_CODES.invalidTransition, `${operation} is not allowed from status ${from}`);
}

/** A bug: a caller passed a value the ledger refuses to store. */
export function invalidInput(what: string): StateStoreError {
  return new StateStoreError(STATE_ERROR_CODES.invalidInput, `invalid ${what}`);
}
