// Startup validation (P-STO-05/06): every retained row of every table is
// checked before recovery or any external work may start. A failure names
// the table only, never a value, so a canary in a malformed row cannot leak.

import type { DatabaseSync } from "node:sqlite";
import { controllerError, err, ok, type Result } from "../domain/errors.ts";
import {
  DECIDERS, INTERACTION_KINDS, INTERACTION_STATES, JOURNAL_VISIBILITIES, LEASE_KINDS, PAYLOAD_STATES,
  RETENTION_PROFILES, TURN_STATES,
} from "../domain/records.ts";
import { catalogIsV1 } from "./catalog-v1.ts";
import {
  FLAT_METADATA_TEXT, FLAT_RECEIPT_TEXT, RAW_CHUNK_METADATA, rawChunkRow, shortChunkMetadata, validKind, validMetadata, validReceipt,
} from "./journal-rules.ts";
import {
  journalColumnsAre, journalIdsInRange, journalPlacement, journalRowsToCheck, journalSequencesConsistent, journalThreadMissing,
  journalTurnIndexed, journalTurnLinked, journalTurnMissing, nulSafe, uniqueSequenceIndex,
} from "./journal-validation.ts";
import { readsCutAtNul, textOf } from "./nul-text.ts";
import { MARKER_PROVEN, MARKER_SHAPE, markerRulesHold } from "./preparation-markers.ts";
import type { Row } from "./rows.ts";
import { everyRow } from "./table-pages.ts";
import { TABLES, type TableName } from "./schema.ts";
import {
  codeOrNull, count, countOrNull, flag, id, idOrNull, jsonAny, jsonObject, jsonStringList, jsonWith, oneOf,
  oneOfOrNull, positive, shortText, shortTextOrNull, type Check,
} from "./validators.ts";

const kind: Check = (v) => validKind(v);
/** A JSON text whose parse `rule` accepts: a text `flat` matches is accepted without parsing (it implies the rule; journal-rules.ts). */
function factsText(flat: RegExp, rule: (value: unknown) => boolean): Check {
  const parsed = jsonWith(rule);
  return (v) => typeof v === "string" && (flat.test(v) || parsed(v));
}
const metadata: Check = factsText(FLAT_METADATA_TEXT, validMetadata);
const digest: Check = (v) => typeof v === "string" && /^[A-Za-z0-9:_-]{8,160}$/.test(v);

const SHAPES: Readonly<Record<TableName, Readonly<Record<string, Check>>>> = {
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
    receipt: factsText(FLAT_RECEIPT_TEXT, validReceipt), created_at: count,
  },
  journal: {
    journal_id: positive, thread_id: id, turn_id: idOrNull, seq: countOrNull, visibility: oneOf(JOURNAL_VISIBILITIES),
    // payload and metadata: what each holds depends on the other (a chunk's raw text, P-STO-42), judged in rowRules.
    kind, message_id: shortTextOrNull, payload_state: oneOf(PAYLOAD_STATES), payload: (v) => v === null || typeof v === "string" || v instanceof Uint8Array,
    metadata: (v) => v === RAW_CHUNK_METADATA || metadata(v), created_at: count,
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
  // The marker store's own shape and rules (preparation-markers.ts validPreparationMarkerRow: MARKER_SHAPE and markerRulesHold, P-STO-07).
  preparation_markers: MARKER_SHAPE,
};

function kindOrMethod(): Check {
  return (v) => typeof v === "string" && /^[a-z][A-Za-z0-9_.]{0,63}$/.test(v);
}

/** Reads a column of one row by name. */
type Column = (name: string) => unknown;

/** A message id as a reader gets it: a NUL-holding one read as its BLOB (nul-text.ts wholeTextItem) decoded. */
const messageIdRead = (value: unknown): unknown => value instanceof Uint8Array ? textOf(value) : value;

/** Rules between the columns of one row, beyond their shapes. */
function rowRules(table: TableName, column: Column): boolean {
  switch (table) {
    case "journal": {
      const messageId = messageIdRead(column("message_id"));
      const stored = column("payload_state") === "stored";
      if ((column("visibility") === "transcript") !== (column("seq") !== null) || stored !== (column("payload") !== null)) return false;
      // A chunk's `[]`: its payload column is its raw text, any text (journal-rules.ts rawChunkRow, P-STO-42), stored; read as its message id.
      if (column("metadata") === RAW_CHUNK_METADATA) return stored && rawChunkRow(column("kind"), messageId, RAW_CHUNK_METADATA) && validMetadata({ messageId });
      // Any other payload is a JSON text; a chunk's `{}` is read as its message id (journal-rules.ts readMetadata): that metadata valid too.
      return (column("payload") === null || jsonAny(column("payload"))) &&
        (!shortChunkMetadata(column("kind"), messageId, column("metadata")) || validMetadata({ messageId }));
    }
    case "interactions":
      return (column("state") === "pending") === (column("settled_at") === null);
    case "preparation_markers":
      return markerRulesHold(column);
    default:
      return true;
  }
}

/**
 * A shape's checks for rows read as arrays in the order of `columns` (the
 * statement's), each check remembering the last value it accepted: the
 * checks are pure, and the rows of a table repeat most of their ids
 * (thread, workspace, provider, principal, application), so a repeat skips
 * the pattern. Undefined when the columns are not exactly the shape's (as
 * rowMatches, validators.ts, refuses a row with a column missing or extra).
 * An array row spares node:sqlite building an object per row (turns and
 * commands at 100k rows: Node ~1.1 -> ~0.65 us a row).
 */
function compiled(table: TableName, shape: Readonly<Record<string, Check>>, columns: readonly string[]): ((row: readonly unknown[]) => boolean) | undefined {
  if (columns.length !== Object.keys(shape).length || new Set(columns).size !== columns.length || !columns.every((c) => Object.hasOwn(shape, c))) return undefined;
  const checks = columns.map((name) => {
    const check = shape[name] as Check;
    let accepted: unknown;
    let any = false;
    return (v: unknown) => {
      if (any && v === accepted) return true;
      if (!check(v)) return false;
      accepted = v;
      any = true;
      return true;
    };
  });
  const at = new Map(columns.map((c, i) => [c, i]));
  const rules = table === "journal" || table === "interactions" || table === "preparation_markers";
  return (row) => {
    for (let i = 0; i < checks.length; i++) if (!(checks[i] as Check)(row[i])) return false;
    return !rules || rowRules(table, (name) => row[at.get(name) as number]);
  };
}

/** A judge of the journal's rows the pass could not prove, read as objects (journal-validation.ts): the same checks and rules, compiled at the first row for the columns that row has (every row of the pass has the same). */
function journalRowJudge(): (row: Row) => boolean {
  let names: readonly string[] | undefined;
  let check: ((row: readonly unknown[]) => boolean) | undefined;
  return (row) => {
    const keys = Object.keys(row);
    if (names === undefined || keys.length !== names.length || keys.some((k, i) => k !== names?.[i])) {
      names = keys;
      check = compiled("journal", SHAPES.journal, keys);
    }
    return check !== undefined && check(keys.map((name) => row[name]));
  };
}

/**
 * Validates every retained row in one read transaction (one snapshot); the
 * first failure answers `storage_record_invalid` naming its table.
 * `cutAtNul` (by default, what this runtime does: nul-text.ts readsCutAtNul)
 * reads every value holding a NUL as its BLOB (nulSafe), judged whole.
 */
export function validateAllRecords(db: DatabaseSync, cutAtNul = readsCutAtNul(db)): Result<void> {
  db.exec("BEGIN");
  try {
    return validateInSnapshot(db, cutAtNul);
  } finally {
    if (db.isTransaction) db.exec("COMMIT");
  }
}

function validateInSnapshot(db: DatabaseSync, cutAtNul: boolean): Result<void> {
  // Every table of schema v1 present and STRICT: the catalog exactly v1's (one read), else read in one statement.
  const v1 = catalogIsV1(db);
  const strict = v1 ? undefined : strictTables(db);
  let markersLinked = false;
  for (const table of TABLES) {
    if (strict !== undefined && strict.get(table) !== true) return err(controllerError("storage_record_invalid", { where: table }));
    if (table === "journal") {
      const journal = validateJournal(db, cutAtNul, v1);
      if (!journal.ok) return journal;
      continue;
    }
    if (table === "preparation_markers" && v1) {
      const markers = markersValid(db, cutAtNul);
      if (markers === "invalid") return err(controllerError("storage_record_invalid", { where: table }));
      markersLinked = markers === "linked";
      continue;
    }
    if (!tableValid(db, table, cutAtNul, v1)) return err(controllerError("storage_record_invalid", { where: table }));
  }
  if (!journalSequencesConsistent(db)) return err(controllerError("storage_record_invalid", { where: "journal" }));
  // The journal's foreign keys were proven in its pass, and the markers' where MARKER_PROVEN proved every row; the other tables are small.
  for (const table of TABLES) {
    if (table !== "journal" && !(table === "preparation_markers" && markersLinked) && db.prepare(`PRAGMA foreign_key_check(${table})`).all().length > 0) return err(controllerError("storage_record_invalid", { where: "foreign_keys" }));
  }
  if (!pagesIntact(db)) return err(controllerError("storage_record_invalid", { where: "integrity" }));
  return ok(undefined);
}

/** Whether each table is STRICT, by name, read in one statement. */
function strictTables(db: DatabaseSync): ReadonlyMap<string, boolean> {
  return new Map((db.prepare("SELECT name, strict FROM pragma_table_list WHERE schema = 'main' AND type = 'table'").all() as Row[])
    .map((r) => [String(r.name), r.strict === 1]));
}

/**
 * Every row of `table` valid, read in the read transaction of the validation
 * as arrays (table-pages.ts: in pages where the catalog is v1's) and judged
 * by its shape and rules (preparation_markers: the marker store's own,
 * preparation-markers.ts); `v1`: the catalog is schema v1's.
 */
function tableValid(db: DatabaseSync, table: Exclude<TableName, "journal">, cutAtNul: boolean, v1: boolean): boolean {
  const n = Number((db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as Row).n);
  // An empty table of a v1 catalog (catalogIsV1: its columns are v1's) holds nothing to judge: no statement to prepare.
  if (n === 0 && v1) return true;
  const { select, valid } = reader(db, table, cutAtNul);
  return valid !== undefined && everyRow(db, table, select, n, v1, valid);
}

/** The select list that reads `table`'s rows for judging, and their judge (undefined: the columns are not the shape's). */
function reader(db: DatabaseSync, table: Exclude<TableName, "journal">, cutAtNul: boolean): { select: string; valid: ((row: readonly unknown[]) => boolean) | undefined } {
  const columns = db.prepare(`SELECT * FROM ${table}`).columns();
  // Read through nulSafe: each column but a STRICT table's INT, INTEGER or REAL, which holds no text (quick_check proves the types).
  const read = (c: { name: string; type: string | null }) => /^(INT|INTEGER|REAL)$/i.test(c.type ?? "") ? `"${c.name}"` : nulSafe(c.name);
  return { select: cutAtNul ? columns.map(read).join(", ") : "*", valid: compiled(table, SHAPES[table], columns.map((c) => c.name)) };
}

/**
 * The markers of a v1 catalog (after turns and threads were judged): a row
 * MARKER_PROVEN proves is not read; the others are read and judged by the
 * marker store's checks and rules like any table's rows. `linked` when it
 * proved every row (their foreign keys then hold), else `valid` or `invalid`.
 */
function markersValid(db: DatabaseSync, cutAtNul: boolean): "linked" | "valid" | "invalid" {
  const { select, valid } = reader(db, "preparation_markers", cutAtNul);
  if (valid === undefined) return "invalid";
  const rest = db.prepare(`SELECT ${select} FROM preparation_markers WHERE (${MARKER_PROVEN}) IS NOT TRUE`);
  rest.setReturnArrays(true);
  let all = true;
  for (const row of rest.iterate() as Iterable<unknown[]>) {
    if (!valid(row)) return "invalid";
    all = false;
  }
  return all ? "linked" : "valid";
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
function validateJournal(db: DatabaseSync, cutAtNul: boolean, v1: boolean): Result<void> {
  const invalid = (where: string) => err(controllerError("storage_record_invalid", { where }));
  // A v1 catalog (catalogIsV1) declares the columns, the unique (thread_id, seq) index and journal_by_turn.
  if (!v1 && (!journalColumnsAre(db, Object.keys(SHAPES.journal)) || !uniqueSequenceIndex(db))) return invalid("journal");
  if (!journalIdsInRange(db)) return invalid("journal");
  const validJournalRow = journalRowJudge();
  const placed = journalPlacement(db);
  const turnLinked = journalTurnLinked(db);
  const turnsBySeek = v1 || journalTurnIndexed(db);
  for (const row of journalRowsToCheck(db, turnsBySeek, cutAtNul)) {
    if (!validJournalRow(row) || !placed(row)) return invalid("journal");
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
