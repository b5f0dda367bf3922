// Startup validation (P-STO-05/06): every retained row of every table is
// checked before recovery or any external work may start. A failure names
// the table only, never a value, so a canary in a malformed row cannot leak.

import type { DatabaseSync } from "node:sqlite";
import { controllerError, err, ok, type Result } from "../domain/errors.ts";
import {
  DECIDERS, INTERACTION_KINDS, INTERACTION_STATES, JOURNAL_VISIBILITIES, LEASE_KINDS, PAYLOAD_STATES,
  RETENTION_PROFILES, TURN_STATES,
} from "../domain/records.ts";
import { validKind, validMetadata, validReceipt } from "./journal-rules.ts";
import {
  journalColumnsAre, journalIdsInRange, journalPlacement, journalRowsToCheck, journalSequencesConsistent, journalThreadMissing,
  journalTurnIndexed, journalTurnLinked, journalTurnMissing, uniqueSequenceIndex,
} from "./journal-validation.ts";
import { validPreparationMarkerRow } from "./preparation-markers.ts";
import type { Row } from "./rows.ts";
import { TABLES, type TableName } from "./schema.ts";
import {
  codeOrNull, count, countOrNull, flag, id, idOrNull, jsonAny, jsonObject, jsonStringList, jsonWith, oneOf,
  oneOfOrNull, positive, shortText, shortTextOrNull, type Check,
} from "./validators.ts";

const kind: Check = (v) => validKind(v);
const metadata: Check = jsonWith(validMetadata);
const digest: Check = (v) => typeof v === "string" && /^[A-Za-z0-9:_-]{8,160}$/.test(v);

const SHAPES: Readonly<Record<Exclude<TableName, "preparation_markers">, Readonly<Record<string, Check>>>> = {
  schema_version: { singleton: (v) => v === 1, version: positive },
  threads: {
    thread_id: id, principal: id, application: id, workspace_id: id, provider: id,
    retention: oneOf(RETENTION_PROFILES), restricted: flag, config_version: positive,
    config: jsonObject, binding: jsonObject, created_at: count, updated_at: count,
  },
  turns: {
    turn_id: id, thread_id: id, command_id: id, attempt_of: idOrNull, state: oneOf(TURN_STATES),
    workspace_id: id, provider: id, config_version: positive, error_code: codeOrNull, created_at: count, updated_at: count,
  },
  commands: {
    principal: id, application: id, command_id: id, method: kindOrMethod(), input_digest: digest,
    receipt: jsonWith(validReceipt), created_at: count,
  },
  journal: {
    journal_id: positive, thread_id: id, turn_id: idOrNull, seq: countOrNull, visibility: oneOf(JOURNAL_VISIBILITIES),
    kind, message_id: shortTextOrNull, payload_state: oneOf(PAYLOAD_STATES), payload: (v) => v === null || jsonAny(v),
    metadata, created_at: count,
  },
  interactions: {
    interaction_id: id, turn_id: id, thread_id: id, native_request_id: shortText, kind: oneOf(INTERACTION_KINDS),
    state: oneOf(INTERACTION_STATES), option_ids: jsonStringList, outcome: shortTextOrNull, decided_by: oneOfOrNull(DECIDERS),
    deadline_at: count, created_at: count, settled_at: countOrNull,
  },
  workspace_leases: { workspace_id: id, turn_id: id, kind: oneOf(LEASE_KINDS), acquired_at: count, confirm_deadline_at: countOrNull },
  provider_sessions: { thread_id: id, provider: id, native_session_id: shortText, binding: jsonObject, created_at: count, updated_at: count },
  auth_sessions: {
    auth_session_id: id, credential_id: id, principal: id, application: id, scopes: jsonStringList,
    bearer_digest: (v) => v === null || digest(v), created_at: count, expires_at: count, revoked_at: countOrNull,
  },
  audit: { audit_id: positive, at: count, actor: id, action: kind, subject_kind: kind, subject_id: shortText, details: metadata },
};

function kindOrMethod(): Check {
  return (v) => typeof v === "string" && /^[a-z][A-Za-z0-9_.]{0,63}$/.test(v);
}

/** Rules between the columns of one row, beyond their shapes. */
function rowRules(table: TableName, row: Row): boolean {
  switch (table) {
    case "journal":
      return (row.visibility === "transcript") === (row.seq !== null) && (row.payload_state === "stored") === (row.payload !== null);
    case "interactions":
      return (row.state === "pending") === (row.settled_at === null);
    case "preparation_markers":
      return validPreparationMarkerRow(row);
    default:
      return true;
  }
}

/**
 * A shape's checks as a list, each remembering the last value it accepted:
 * the checks are pure, and the rows of a table repeat most of their ids
 * (thread, workspace, provider, principal, application), so a repeat skips
 * the pattern. The same verdicts as rowMatches (validators.ts), without its
 * three arrays per row.
 */
function compiled(shape: Readonly<Record<string, Check>>): (row: Row) => boolean {
  const checks = Object.entries(shape).map(([column, check]) => {
    let accepted: unknown;
    let any = false;
    const remembered: Check = (v) => {
      if (any && v === accepted) return true;
      if (!check(v)) return false;
      accepted = v;
      any = true;
      return true;
    };
    return [column, remembered] as const;
  });
  return (row) => {
    if (Object.keys(row).length !== checks.length) return false;
    for (const [column, check] of checks) if (!(column in row) || !check(row[column])) return false;
    return true;
  };
}

const MATCHERS = Object.fromEntries(Object.entries(SHAPES).map(([table, shape]) => [table, compiled(shape)])) as
  Readonly<Record<keyof typeof SHAPES, (row: Row) => boolean>>;

function validRow(table: TableName, row: Row): boolean {
  if (table === "preparation_markers") return validPreparationMarkerRow(row);
  return MATCHERS[table](row) && rowRules(table, row);
}

/** Validates every retained row in one read transaction (one snapshot); the first failure answers `storage_record_invalid` naming its table. */
export function validateAllRecords(db: DatabaseSync): Result<void> {
  db.exec("BEGIN");
  try {
    return validateInSnapshot(db);
  } finally {
    if (db.isTransaction) db.exec("COMMIT");
  }
}

function validateInSnapshot(db: DatabaseSync): Result<void> {
  // Every table of schema v1 present and STRICT, read in one statement.
  const strict = new Map((db.prepare("SELECT name, strict FROM pragma_table_list WHERE schema = 'main' AND type = 'table'").all() as Row[])
    .map((r) => [String(r.name), r.strict === 1]));
  for (const table of TABLES) {
    if (strict.get(table) !== true) return err(controllerError("storage_record_invalid", { where: table }));
    if (table === "journal") {
      const journal = validateJournal(db);
      if (!journal.ok) return journal;
      continue;
    }
    for (const row of tableRows(db, table)) {
      if (!validRow(table, row)) return err(controllerError("storage_record_invalid", { where: table }));
    }
  }
  if (!journalSequencesConsistent(db)) return err(controllerError("storage_record_invalid", { where: "journal" }));
  // The journal's foreign keys were proven in its pass; the other tables are small.
  for (const table of TABLES) {
    if (table !== "journal" && db.prepare(`PRAGMA foreign_key_check(${table})`).all().length > 0) return err(controllerError("storage_record_invalid", { where: "foreign_keys" }));
  }
  if (!pagesIntact(db)) return err(controllerError("storage_record_invalid", { where: "integrity" }));
  return ok(undefined);
}

/**
 * A table of at most this many rows is read at once with all(): node:sqlite
 * builds a row for less than its iterator does (per row, Node about 0.95 vs
 * 1.4 us, Deno 1.25 vs 2.9 us); a larger one is iterated, so the memory a
 * read holds stays bounded (a few MB).
 */
const READ_ALL_MAX_ROWS = 8_192;

/** Every row of `table`, in the read transaction of the validation. */
function tableRows(db: DatabaseSync, table: TableName): Iterable<Row> {
  const n = Number((db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as Row).n);
  const rows = db.prepare(`SELECT * FROM ${table}`);
  return n <= READ_ALL_MAX_ROWS ? rows.all() as Row[] : rows.iterate() as Iterable<Row>;
}

/**
 * The journal grows with use: SQLite proves most of its rows valid and their
 * turn linked in one pass, the rest are read and judged here
 * (journal-validation.ts); the turns and threads the rows name are proven to
 * exist from their distinct ids, read through the journal's indexes. A row that passes
 * the JS rules but links to no thread or turn is a foreign key failure, as
 * `foreign_key_check` would name it; a missing thread whose id is not even an
 * id is an invalid row.
 */
function validateJournal(db: DatabaseSync): Result<void> {
  const invalid = (where: string) => err(controllerError("storage_record_invalid", { where }));
  if (!journalColumnsAre(db, Object.keys(SHAPES.journal)) || !journalIdsInRange(db) || !uniqueSequenceIndex(db)) return invalid("journal");
  const placed = journalPlacement(db);
  const turnLinked = journalTurnLinked(db);
  const turnsBySeek = journalTurnIndexed(db);
  for (const row of journalRowsToCheck(db, turnsBySeek)) {
    if (!validRow("journal", row) || !placed(row)) return invalid("journal");
    if (!turnLinked(row)) return invalid("foreign_keys");
  }
  const turn = turnsBySeek ? journalTurnMissing(db) : undefined;
  if (turn !== undefined) return invalid(id(turn.turnId) ? "foreign_keys" : "journal");
  const missing = journalThreadMissing(db);
  if (missing !== undefined) return invalid(id(missing.threadId) ? "foreign_keys" : "journal");
  return ok(undefined);
}

/**
 * `PRAGMA quick_check` of the file's pages and records. On a writable
 * connection SQLite would also evaluate every CHECK constraint again (about
 * 3x the check itself at 1M rows), which the row rules above already imply,
 * each being narrower; so CHECKs are off for this one statement and back on
 * before anything can write.
 */
function pagesIntact(db: DatabaseSync): boolean {
  db.exec("PRAGMA ignore_check_constraints = ON");
  try {
    const quick = db.prepare("PRAGMA quick_check").all() as Row[];
    return quick.length === 1 && quick[0]?.quick_check === "ok";
  } finally {
    db.exec("PRAGMA ignore_check_constraints = OFF");
  }
}
