// The journal's startup validation at SQLite's speed. The journal is the one
// table that grows with use (1M rows in a long-lived install), and reading
// every row into a JS object costs ~40x a `quick_check`. So one pass of SQLite
// proves rows valid with a predicate whose every clause implies its JS check
// (anything unusual, e.g. a NUL or a long string, simply fails it); the short
// text facts of a row (kind, message id, metadata) are judged by the JS rules
// themselves through one SQL function that remembers the last verdict. Only
// the rows not proven are read and judged by the JS validator, which stays
// the one definition of valid.
import type { DatabaseSync } from "node:sqlite";
import { EVENT_KINDS } from "../domain/contract/events.ts";
import { JOURNAL_VISIBILITIES, PAYLOAD_STATES } from "../domain/records.ts";
import { validKind, validMetadata } from "./journal-rules.ts";
import type { Row } from "./rows.ts";
import { shortTextOrNull } from "./validators.ts";

const MAX_SAFE = "9007199254740991";
const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(", ");
const safeCount = (c: string) => `(typeof(${c}) = 'integer' AND ${c} >= 0 AND ${c} <= ${MAX_SAFE})`;

/**
 * The row facts of most journal rows proven in SQL, without a call into JS
 * (which costs more than the rest of the pass): a contract event kind (each
 * matches KIND_PATTERN), a message id of 1..256 UTF-8 bytes (so 1..256 UTF-16
 * units, within shortTextOrNull and METADATA_MAX_STRING), and metadata that is
 * `{}` or exactly `{"messageId": <that id>}` as SQLite encodes it (a streamed
 * chunk's; valid by validMetadata). Any other row asks the JS rules.
 */
const COMMON_FACTS = `(kind IN (${list(Object.keys(EVENT_KINDS).filter((k) => validKind(k)))})
    AND (message_id IS NULL OR (typeof(message_id) = 'text' AND octet_length(message_id) BETWEEN 1 AND 256))
    AND (metadata = '{}' OR metadata = json_object('messageId', message_id)))`;

/**
 * Payload placement follows the thread's retention (a transcript row of a
 * metadata-only thread stores no payload; one of a full thread keeps it in
 * the database), judged in the one pass: the threads of each retention are a
 * small set SQLite looks each row's thread up in. Rows of an unknown thread
 * are the foreign-key check's.
 */
const PLACED = `(seq IS NULL OR payload_state = 'none'
    OR (payload_state = 'stored' AND thread_id NOT IN (SELECT thread_id FROM threads WHERE retention = 'metadata-only'))
    OR (payload_state = 'volatile' AND thread_id NOT IN (SELECT thread_id FROM threads WHERE retention = 'full')))`;

/** The rows SQLite proves valid: every clause implies the matching JS check of record-validation.ts. */
const SURELY_VALID = [
  `typeof(journal_id) = 'integer' AND journal_id >= 1 AND journal_id <= ${MAX_SAFE}`,
  // thread_id and turn_id are judged once per distinct value (journalIdsValid), not per row.
  `(seq IS NULL OR ${safeCount("seq")})`,
  `visibility IN (${list(JOURNAL_VISIBILITIES)})`,
  `payload_state IN (${list(PAYLOAD_STATES)})`,
  safeCount("created_at"),
  `((visibility = 'transcript') = (seq IS NOT NULL))`,
  `((payload_state = 'stored') = (payload IS NOT NULL))`,
  // json_valid stops at the first NUL; JSON.parse does not.
  `(payload IS NULL OR (typeof(payload) = 'text' AND instr(payload, char(0)) = 0 AND json_valid(payload)))`,
  // kind (KIND_PATTERN), message_id (shortTextOrNull) and metadata (validMetadata): the JS rules themselves, which
  // see the whole text (node:sqlite hands a function the full value, NULs included) and check its type.
  `(${COMMON_FACTS} OR aic_row_facts(kind, message_id, metadata) = 1)`,
  PLACED,
].join("\n  AND ");

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
    if (validKind(kind) && shortTextOrNull(messageId) && typeof metadata === "string") {
      try { verdict = metadata === "{}" || validMetadata(JSON.parse(metadata)) ? 1 : 0; } catch { verdict = 0; }
    }
    last = [kind, messageId, metadata];
    lastVerdict = verdict;
    return verdict;
  };
}

/** The journal's columns, checked once for the whole table instead of per row. */
export function journalColumnsAre(db: DatabaseSync, expected: readonly string[]): boolean {
  const names = (db.prepare("SELECT name FROM pragma_table_info('journal')").all() as Row[]).map((r) => String(r.name));
  return names.length === expected.length && expected.every((c) => names.includes(c));
}

/** Journal rows SQLite could not prove valid, in one pass over the table; the caller judges each with the JS rules and `journalPlacement`. */
export function journalRowsToCheck(db: DatabaseSync): Iterable<Row> {
  db.function("aic_row_facts", { deterministic: true }, rowFactsJudge());
  return db.prepare(`SELECT * FROM journal WHERE NOT (${SURELY_VALID})`).iterate() as Iterable<Row>;
}

/** The JS form of PLACED for the rows the pass could not prove: true when the row's payload sits where its thread's retention puts it. */
export function journalPlacement(db: DatabaseSync): (row: Row) => boolean {
  const retention = new Map((db.prepare("SELECT thread_id, retention FROM threads").all() as Row[]).map((r) => [r.thread_id, r.retention]));
  return (row) => {
    if (row.seq === null || row.payload_state === "none") return true;
    const kept = retention.get(row.thread_id);
    return row.payload_state === "stored" ? kept !== "metadata-only" : row.payload_state === "volatile" ? kept !== "full" : false;
  };
}

/** Every distinct thread and turn id of the journal passes `valid` (few values, read through their indexes). */
export function journalIdsValid(db: DatabaseSync, validThread: (v: unknown) => boolean, validTurn: (v: unknown) => boolean): boolean {
  for (const row of db.prepare("SELECT DISTINCT thread_id AS v FROM journal").iterate() as Iterable<Row>) if (!validThread(row.v)) return false;
  for (const row of db.prepare("SELECT DISTINCT turn_id AS v FROM journal").iterate() as Iterable<Row>) if (!validTurn(row.v)) return false;
  return true;
}

/** The journal's UNIQUE (thread_id, seq) constraint is in force: a unique, non-partial index on exactly those columns. */
function uniqueSequenceIndex(db: DatabaseSync): boolean {
  const indexes = db.prepare("SELECT name FROM pragma_index_list('journal') WHERE \"unique\" = 1 AND partial = 0").all() as Row[];
  return indexes.some((index) => {
    const columns = (db.prepare("SELECT name FROM pragma_index_info(?) ORDER BY seqno").all(String(index.name)) as Row[]).map((r) => r.name);
    return columns.length === 2 && columns[0] === "thread_id" && columns[1] === "seq";
  });
}

/**
 * Transcript sequences contiguous from 1 per thread (payload placement is
 * judged in the one pass, PLACED). With (thread_id, seq) unique, a thread's
 * n transcript rows are exactly 1..n when their least seq is 1 and their
 * greatest is n, so count, min and max per thread are read from that index
 * alone (no temporary b-tree for a distinct count).
 */
export function journalSequencesConsistent(db: DatabaseSync): boolean {
  if (!uniqueSequenceIndex(db)) return false;
  const gap = db.prepare(`SELECT 1 FROM (SELECT count(*) AS n, min(seq) AS lo, max(seq) AS hi
      FROM journal WHERE seq IS NOT NULL AND thread_id IN (SELECT thread_id FROM threads) GROUP BY thread_id)
    WHERE lo != 1 OR hi != n LIMIT 1`).get();
  return gap === undefined;
}
