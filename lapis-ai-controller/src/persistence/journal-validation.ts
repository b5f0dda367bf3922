// The journal's startup validation at SQLite's speed. The journal is the one
// table that grows with use (1M rows in a long-lived install), and reading
// every row into a JS object costs ~40x a `quick_check`. So SQLite first
// proves rows valid with a predicate that is strictly narrower than the JS
// rules (each clause implies its JS check; anything unusual, e.g. a NUL or a
// long string, simply fails it), and only the rows it cannot prove are read
// and judged by the JS validator, which stays the one definition of valid.
import type { DatabaseSync } from "node:sqlite";
import { JOURNAL_VISIBILITIES, PAYLOAD_STATES } from "../domain/records.ts";
import { validMetadata } from "./journal-rules.ts";
import type { Row } from "./rows.ts";

const MAX_SAFE = "9007199254740991";
const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(", ");
/** Text without NUL (GLOB and length() stop at the first NUL) of 1..max UTF-8 bytes (so <= max UTF-16 units). */
const plainText = (c: string, max: number) =>
  `(typeof(${c}) = 'text' AND instr(${c}, char(0)) = 0 AND octet_length(${c}) BETWEEN 1 AND ${max})`;
/** Text without NUL (json_valid, like GLOB, stops at the first NUL; JSON.parse does not). */
const nulFreeText = (c: string) => `(typeof(${c}) = 'text' AND instr(${c}, char(0)) = 0)`;
const safeCount = (c: string) => `(typeof(${c}) = 'integer' AND ${c} >= 0 AND ${c} <= ${MAX_SAFE})`;
/** Metadata is judged by the JS rule itself (validMetadata), called from SQL on the one column. */
const METADATA = `(metadata = '{}' OR (${nulFreeText("metadata")} AND aic_valid_metadata(metadata) = 1))`;

/** The rows SQLite proves valid: every clause implies the matching JS check of record-validation.ts. */
const SURELY_VALID = [
  `typeof(journal_id) = 'integer' AND journal_id >= 1 AND journal_id <= ${MAX_SAFE}`,
  // thread_id and turn_id are judged once per distinct value (journalIdsValid), not per row.
  `(seq IS NULL OR ${safeCount("seq")})`,
  `visibility IN (${list(JOURNAL_VISIBILITIES)})`,
  // journal-rules.ts KIND_PATTERN: /^[a-z][a-z0-9_]{0,63}$/
  `(${plainText("kind", 64)} AND kind GLOB '[a-z]*' AND kind NOT GLOB '*[^a-z0-9_]*')`,
  `(message_id IS NULL OR ${plainText("message_id", 1_024)})`,
  `payload_state IN (${list(PAYLOAD_STATES)})`,
  `(payload IS NULL OR (${nulFreeText("payload")} AND json_valid(payload)))`,
  METADATA,
  safeCount("created_at"),
  `((visibility = 'transcript') = (seq IS NOT NULL))`,
  `((payload_state = 'stored') = (payload IS NOT NULL))`,
].join("\n  AND ");

/** The journal's columns, checked once for the whole table instead of per row. */
export function journalColumnsAre(db: DatabaseSync, expected: readonly string[]): boolean {
  const names = (db.prepare("SELECT name FROM pragma_table_info('journal')").all() as Row[]).map((r) => String(r.name));
  return names.length === expected.length && expected.every((c) => names.includes(c));
}

/** Journal rows SQLite could not prove valid; the caller judges each with the JS rules. */
export function journalRowsToCheck(db: DatabaseSync): Iterable<Row> {
  db.function("aic_valid_metadata", { deterministic: true }, (text: unknown) => {
    if (typeof text !== "string") return 0;
    try { return validMetadata(JSON.parse(text)) ? 1 : 0; } catch { return 0; }
  });
  return db.prepare(`SELECT * FROM journal WHERE NOT (${SURELY_VALID})`).iterate() as Iterable<Row>;
}

/** Every distinct thread and turn id of the journal passes `valid` (few values, read through their indexes). */
export function journalIdsValid(db: DatabaseSync, validThread: (v: unknown) => boolean, validTurn: (v: unknown) => boolean): boolean {
  for (const row of db.prepare("SELECT DISTINCT thread_id AS v FROM journal").iterate() as Iterable<Row>) if (!validThread(row.v)) return false;
  for (const row of db.prepare("SELECT DISTINCT turn_id AS v FROM journal").iterate() as Iterable<Row>) if (!validTurn(row.v)) return false;
  return true;
}

/** Transcript sequences contiguous from 1 per thread, and payload placement matching the thread's retention. */
export function journalSequencesConsistent(db: DatabaseSync): boolean {
  const gap = db.prepare(`SELECT 1 FROM (SELECT count(*) AS n, count(DISTINCT seq) AS d, min(seq) AS lo, max(seq) AS hi
      FROM journal WHERE seq IS NOT NULL AND thread_id IN (SELECT thread_id FROM threads) GROUP BY thread_id)
    WHERE n != d OR lo != 1 OR hi != n LIMIT 1`).get();
  if (gap !== undefined) return false;
  const misplaced = db.prepare(`SELECT 1 FROM journal j JOIN threads t ON t.thread_id = j.thread_id
    WHERE j.seq IS NOT NULL AND ((t.retention = 'metadata-only' AND j.payload_state = 'stored') OR (t.retention = 'full' AND j.payload_state = 'volatile'))
    LIMIT 1`).get();
  return misplaced === undefined;
}
