// The journal's startup validation at SQLite's speed. The journal is the one
// table that grows with use (1M rows in a long-lived install), and reading
// every row into a JS object costs ~40x a `quick_check`. So one pass of SQLite
// proves rows valid and their turn linked with a predicate whose every clause
// implies its JS check (anything unusual, e.g. a NUL or a long string, simply
// fails it, and so does a clause that meets a NULL: the pass keeps the rows
// whose predicate IS NOT TRUE); the short text facts of an unusual row (kind,
// message id, metadata) are judged by the JS rules themselves through one SQL
// function that remembers the last verdict. Only the rows not proven are read
// and judged by the JS validator, which stays the one definition of valid.
//
// What the pass leaves out is proven elsewhere, never assumed: the column
// types and NOT NULLs by the STRICT table and `quick_check` (which reports a
// wrong type or a NULL in a STRICT table, CHECKs off or not), the ids by the
// rows they link to (validated in their own tables first), the turns and
// threads the rows name by their distinct ids read from the journal's indexes
// (a seek per turn and per thread, journalTurnMissing, journalThreadMissing), and the ranges of journal_id and seq
// through the rowid and that index, a few seeks per thread
// (journalSequencesConsistent).
import type { DatabaseSync } from "node:sqlite";
import { EVENT_KINDS } from "../domain/contract/events.ts";
import { CHUNK_KINDS, RAW_CHUNK_METADATA, readMetadata, validKind, validMetadata } from "./journal-rules.ts";
import { wholeTextItem } from "./nul-text.ts";
import type { Row } from "./rows.ts";
import { shortTextOrNull } from "./validators.ts";

const MAX_SAFE = "9007199254740991";
const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(", ");

/**
 * The row facts of most journal rows proven in SQL, without a call into JS
 * (which costs more than the rest of the pass): a contract event kind (each
 * matches KIND_PATTERN), and metadata `{}` (what a streamed chunk stores,
 * journal-rules.ts storedMetadata: read as `{"messageId": <the row's message
 * id>}`, valid by validMetadata for an id of at most 256 UTF-16 units) or
 * `{"messageId":null}`, each beside a NULL id or one of 1..256 UTF-8 bytes, or
 * (a file written before P-STO-40) metadata exactly `{"messageId": <the row's
 * message id>}` as SQLite encodes it, whose 17..272 bytes bound the id to
 * 1..256 UTF-8 bytes (the encoding adds 16 bytes and never shortens the id; a
 * NULL id encodes as `null`). 1..256 bytes are 1..256 UTF-16 units, within
 * shortTextOrNull and METADATA_MAX_STRING; a TEXT by the STRICT table. The
 * constants are compared first: an equality with a constant costs a fraction
 * of building the JSON object (and the chunk kinds before the IN list, for the
 * same reason). Any other row asks the JS rules.
 */
const COMMON_FACTS = `((kind = 'text' OR kind = 'reasoning' OR kind IN (${list(Object.keys(EVENT_KINDS).filter((k) => validKind(k) && !CHUNK_KINDS.includes(k)))}))
    AND ((metadata = '{}' OR metadata = '{"messageId":null}') AND (message_id IS NULL OR octet_length(message_id) BETWEEN 1 AND 256)
      OR metadata = json_object('messageId', message_id) AND octet_length(metadata) BETWEEN 17 AND 272))`;

/**
 * A chunk row whose payload column is its raw text (P-STO-42, journal-rules.ts
 * rawChunkText): metadata RAW_CHUNK_METADATA beside a chunk kind and a message
 * id of 1..256 UTF-8 bytes (so 1..256 UTF-16 units: shortText, and the
 * `{"messageId": <id>}` it reads as passes validMetadata), stored, with a
 * payload. Any TEXT is a valid raw text (a NUL included: readers keep it
 * whole, nul-text.ts), and STRICT with `quick_check` proves the column's type,
 * so neither json_valid nor the NUL check is asked. No row proven by
 * COMMON_FACTS or aic_row_facts has this metadata, so the payload clause
 * below needs nothing more for it. Where `notIn` gives it, the payload sits
 * where the thread's retention keeps it.
 */
function rawChunkFacts(notIn: (retention: string) => string): string {
  return `metadata = '${RAW_CHUNK_METADATA}' AND (kind = 'text' OR kind = 'reasoning') AND octet_length(message_id) BETWEEN 1 AND 256
    AND payload_state = 'stored' AND payload IS NOT NULL${notIn("metadata-only")}`;
}

/**
 * A stored payload JSON.parse accepts: valid JSON (json_valid) with no NUL
 * (json_valid stops at the first NUL; JSON.parse does not). A text whose
 * character count equals its byte count is ASCII without a NUL (length()
 * counts up to the first NUL), which spares most rows the search for one. A
 * NULL payload makes the clause NULL: not proven.
 */
const PAYLOAD_PARSES = `(length(payload) = octet_length(payload) OR instr(payload, char(0)) = 0) AND json_valid(payload)`;

/**
 * The rows SQLite proves valid: every clause implies the matching JS check of
 * record-validation.ts. Payload placement follows the thread's retention (a
 * transcript row of a metadata-only thread stores no payload; one of a full
 * thread keeps it in the database); a retention no thread has needs no lookup.
 * created_at shifted right by 53 bits is 0 exactly for 0..2^53-1 (the shift
 * keeps the sign). The order is the cheapest measured: SQLite evaluates the
 * clauses left to right, and reading the row's last column (created_at)
 * first, the payload last, cost the pass ~8-12% less than visibility,
 * payload, created_at, facts (all 24 orders timed at 10k rows, Node and Deno;
 * docs/performance.md, "Startup validation: serial cuts").
 */
function surelyValid(retentions: ReadonlySet<string>, turnsBySeek: boolean): string {
  const notIn = (retention: string) => retentions.has(retention)
    ? ` AND (seq IS NULL OR thread_id NOT IN (SELECT thread_id FROM threads WHERE retention = '${retention}'))` : "";
  return [
    `(created_at >> 53) = 0`,
    // kind (KIND_PATTERN), message_id (shortTextOrNull) and metadata (validMetadata): the JS rules themselves, which
    // see the whole text (node:sqlite hands a function the full value, NULs included) and check its type.
    // A chunk's raw text (P-STO-42) proves its payload clause here too; its metadata passes none of the other two.
    `(${rawChunkFacts(notIn)} OR ${COMMON_FACTS} OR aic_row_facts(kind, message_id, metadata) = 1)`,
    // visibility, and transcript rows exactly the sequenced ones
    `(visibility = 'transcript' AND seq IS NOT NULL OR visibility = 'owner' AND seq IS NULL)`,
    // payload_state, a payload exactly when stored, a stored payload that parses, each where its thread's retention puts it
    `(metadata = '${RAW_CHUNK_METADATA}'
      OR payload_state = 'stored' AND ${PAYLOAD_PARSES}${notIn("metadata-only")}
      OR payload_state = 'volatile' AND payload IS NULL${notIn("full")}
      OR payload_state = 'none' AND payload IS NULL)`,
    // the row's turn exists, unless proven per distinct turn (journalTurnMissing; its thread: journalThreadMissing)
    ...turnsBySeek ? [] : [`(turn_id IS NULL OR turn_id IN (SELECT turn_id FROM turns))`],
  ].join("\n  AND ");
}

/**
 * Judges a row's kind, message id and metadata with the JS rules. Consecutive
 * rows mostly repeat all three (the chunks of one message share its kind and
 * `messageId`), so the last verdict is kept: the rules are pure functions of
 * the texts, and skipping JSON.parse for a repeat is most of their cost.
 */
function rowFactsJudge(): (kind: unknown, messageId: unknown, metadata: unknown) => number {
  let last: readonly unknown[] = [];
  let lastVerdict = 0;
  return (kind, messageId, metadata) => {
    if (kind === last[0] && messageId === last[1] && metadata === last[2]) return lastVerdict;
    let verdict = 0;
    // A chunk's raw-text metadata (P-STO-42) is judged with its payload, by the JS rules of the row: never proven here.
    if (validKind(kind) && shortTextOrNull(messageId) && typeof metadata === "string" && metadata !== RAW_CHUNK_METADATA) {
      // The metadata as readers get it (a chunk's `{}` is its message id: readMetadata).
      try { verdict = validMetadata(readMetadata(kind, messageId, metadata)) ? 1 : 0; } catch { verdict = 0; }
    }
    last = [kind, messageId, metadata];
    lastVerdict = verdict;
    return verdict;
  };
}

/**
 * The journal's columns as schema v1 declares them (type, NOT NULL), checked
 * once for the whole table instead of per row: with the table STRICT,
 * `quick_check` then proves every value's type and every NOT NULL, and no
 * clause of the pass can meet an unexpected NULL. No collation is declared,
 * so every text comparison of the pass is byte-exact, as the JS rules are.
 */
const JOURNAL_COLUMNS: Readonly<Record<string, string>> = {
  journal_id: "INTEGER", thread_id: "TEXT NOT NULL", turn_id: "TEXT", seq: "INTEGER", visibility: "TEXT NOT NULL",
  kind: "TEXT NOT NULL", message_id: "TEXT", payload_state: "TEXT NOT NULL", payload: "TEXT", metadata: "TEXT NOT NULL",
  created_at: "INTEGER NOT NULL",
};

/** The journal has exactly `expected` columns, declared as schema v1 declares them, and no collation. */
export function journalColumnsAre(db: DatabaseSync, expected: readonly string[]): boolean {
  const columns = db.prepare("SELECT name, type, \"notnull\" AS nn FROM pragma_table_info('journal')").all() as Row[];
  const declared = new Map(columns.map((c) => [String(c.name), `${String(c.type).toUpperCase()}${c.nn === 1 ? " NOT NULL" : ""}`]));
  const table = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'journal'").get() as Row | undefined;
  return declared.size === expected.length && expected.every((c) => JOURNAL_COLUMNS[c] !== undefined && declared.get(c) === JOURNAL_COLUMNS[c]) &&
    typeof table?.sql === "string" && !/collate/i.test(table.sql);
}

/**
 * A column read as itself, or as its BLOB when it holds a NUL: for a runtime that cuts a text at its NUL (nul-text.ts
 * readsCutAtNul). validators.ts shortText judges the decoded text; every other check refuses a BLOB, as it refuses
 * the whole text (a NUL passes none of them).
 */
export function nulSafe(column: string): string {
  return wholeTextItem(`"${column}"`, column);
}

/**
 * Journal rows SQLite could not prove valid with their turn linked, in one
 * pass over the table; the caller judges each with the JS rules,
 * `journalPlacement` and `journalTurnLinked`. With `turnsBySeek` the pass
 * leaves the turn link out and the caller proves it per distinct turn
 * (journalTurnMissing).
 */
export function* journalRowsToCheck(db: DatabaseSync, turnsBySeek: boolean, cutAtNul = false): Iterable<Row> {
  db.function("aic_row_facts", { deterministic: true }, rowFactsJudge());
  const retentions = new Set((db.prepare("SELECT DISTINCT retention AS r FROM threads").all() as Row[]).map((r) => String(r.r)));
  // seq and created_at beyond a safe integer read as -1 (invalid either way): node:sqlite throws on reading one into a number.
  // With cutAtNul, every text the JS rules judge is read through nulSafe.
  const text = (column: string) => cutAtNul ? nulSafe(column) : column;
  yield* db.prepare(`SELECT journal_id, ${text("thread_id")}, ${text("turn_id")}, CASE WHEN seq >> 53 <> 0 THEN -1 ELSE seq END AS seq,
      ${["visibility", "kind", "message_id", "payload_state", "payload", "metadata"].map(text).join(", ")},
      CASE WHEN created_at >> 53 <> 0 THEN -1 ELSE created_at END AS created_at
    FROM journal WHERE (${surelyValid(retentions, turnsBySeek)}) IS NOT TRUE`).iterate() as Iterable<Row>;
}

/** The JS form of the placement clause for the rows the pass could not prove: true when the row's payload sits where its thread's retention puts it. The threads are read at the first row asked about. */
export function journalPlacement(db: DatabaseSync): (row: Row) => boolean {
  let retention: Map<unknown, unknown> | undefined;
  return (row) => {
    if (row.seq === null || row.payload_state === "none") return true;
    retention ??= new Map((db.prepare("SELECT thread_id, retention FROM threads").all() as Row[]).map((r) => [r.thread_id, r.retention]));
    const kept = retention.get(row.thread_id);
    return row.payload_state === "stored" ? kept !== "metadata-only" : row.payload_state === "volatile" ? kept !== "full" : false;
  };
}

/** The JS form of the pass's turn clause, for the rows it could not prove: the row names no turn or an existing one. Prepared at the first row asked about. */
export function journalTurnLinked(db: DatabaseSync): (row: Row) => boolean {
  let turn: ReturnType<DatabaseSync["prepare"]> | undefined;
  return (row) => row.turn_id === null ||
    (typeof row.turn_id === "string" && (turn ??= db.prepare("SELECT 1 AS present FROM turns WHERE turn_id = ?")).get(row.turn_id) !== undefined);
}

/**
 * The first thread id the journal names that no thread row has, or undefined
 * when every one exists: the distinct thread ids read from the UNIQUE
 * (thread_id, seq) index one seek at a time (each the least id above the
 * last), a seek per thread instead of one per row. Without that index the
 * journal is refused before this is asked (uniqueSequenceIndex).
 */
export function journalThreadMissing(db: DatabaseSync): { readonly threadId: unknown } | undefined {
  const missing = firstIdMissing(db, "thread_id", "threads");
  return missing === undefined ? undefined : { threadId: missing.id };
}

/**
 * The least distinct value of the journal's `column` that `table` has no row
 * for: the distinct values read from an index led by `column` one seek at a
 * time (each the least value above the last).
 */
function firstIdMissing(db: DatabaseSync, column: "thread_id" | "turn_id", table: "threads" | "turns"): Row | undefined {
  return db.prepare(`WITH RECURSIVE ids(id) AS (
      SELECT (SELECT min(${column}) FROM journal)
      UNION ALL SELECT (SELECT min(${column}) FROM journal WHERE ${column} > ids.id) FROM ids WHERE ids.id IS NOT NULL)
    SELECT id FROM ids WHERE id IS NOT NULL AND id NOT IN (SELECT ${column} FROM ${table}) LIMIT 1`).get() as Row | undefined;
}

/**
 * The journal has an index led by turn_id in binary order (schema v1's
 * journal_by_turn), so the distinct turn ids can be read a seek at a time
 * (journalTurnMissing) instead of the pass seeking every row's turn.
 * Without one, the pass keeps the per-row clause.
 */
export function journalTurnIndexed(db: DatabaseSync): boolean {
  return db.prepare(`SELECT 1 AS present FROM pragma_index_list('journal') AS l, pragma_index_xinfo(l.name) AS x
    WHERE l.partial = 0 AND x.seqno = 0 AND x.key = 1 AND x.name = 'turn_id' AND x.coll = 'BINARY' LIMIT 1`).get() !== undefined;
}

/**
 * The first turn id the journal names that no turn row has, or undefined
 * when every one exists: the distinct turn ids read one seek at a time
 * (each the least id above the last), through the index journalTurnIndexed
 * found, a seek per turn instead of one per row. A row whose turn id is not
 * an id names no turn (every turn row's id is validated), so it is found
 * here too.
 */
export function journalTurnMissing(db: DatabaseSync): { readonly turnId: unknown } | undefined {
  const missing = firstIdMissing(db, "turn_id", "turns");
  return missing === undefined ? undefined : { turnId: missing.id };
}

/** Every journal_id is a positive safe integer: the rowid's least and greatest, two seeks. */
export function journalIdsInRange(db: DatabaseSync): boolean {
  // Two scalar subqueries in one statement: SQLite seeks a lone min() or max() of the rowid (each subquery has one), but scans for both in one SELECT.
  const ids = db.prepare(`SELECT coalesce((SELECT min(journal_id) FROM journal) >= 1, 1) AND coalesce((SELECT max(journal_id) FROM journal) <= ${MAX_SAFE}, 1) AS ok`).get() as Row;
  return ids.ok === 1;
}

/** The journal's UNIQUE (thread_id, seq) constraint is in force: a unique, non-partial index on exactly those columns. */
export function uniqueSequenceIndex(db: DatabaseSync): boolean {
  const indexes = db.prepare("SELECT name FROM pragma_index_list('journal') WHERE \"unique\" = 1 AND partial = 0").all() as Row[];
  return indexes.some((index) => {
    const columns = (db.prepare("SELECT name FROM pragma_index_info(?) ORDER BY seqno").all(String(index.name)) as Row[]).map((r) => r.name);
    return columns.length === 2 && columns[0] === "thread_id" && columns[1] === "seq";
  });
}

/**
 * Transcript sequences contiguous from 1 per thread, and every seq a safe
 * integer, read from the UNIQUE (thread_id, seq) index in a few seeks per
 * thread rather than a scan. With (thread_id, seq) unique and every seq of
 * thread t in [lo_t, hi_t] with lo_t >= 1, t's count is at most hi_t, equal
 * exactly when its seqs are 1..hi_t; so the sum of hi_t equals the number of
 * sequenced rows exactly when every thread's are contiguous. That number is
 * the journal's row count less its unsequenced rows (a range of the index per
 * thread); every row's thread exists (journalThreadMissing proved it), so the
 * threads' rows are all the rows. The caller has proven the index itself
 * (uniqueSequenceIndex, before the journal's pass).
 */
export function journalSequencesConsistent(db: DatabaseSync): boolean {
  const total = Number((db.prepare("SELECT count(*) AS n FROM journal").get() as Row).n);
  // Compared in SQL: a seq beyond a safe integer is never read into JS.
  const sums = db.prepare(`SELECT count(*) FILTER (WHERE lo < 1 OR hi > :total) AS bad,
      coalesce(sum(CASE WHEN hi <= :total THEN hi END), 0) AS highs, coalesce(sum(unsequenced), 0) AS unsequenced
    FROM (SELECT
      (SELECT min(seq) FROM journal j WHERE j.thread_id = t.thread_id AND j.seq IS NOT NULL) AS lo,
      (SELECT max(seq) FROM journal j WHERE j.thread_id = t.thread_id) AS hi,
      (SELECT count(*) FROM journal j WHERE j.thread_id = t.thread_id AND j.seq IS NULL) AS unsequenced
    FROM threads t)`).get({ total }) as Row;
  return Number(sums.bad) === 0 && Number(sums.highs) === total - Number(sums.unsequenced);
}
