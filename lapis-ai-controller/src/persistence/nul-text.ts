// Texts holding a NUL, kept whole on every runtime (P-STO-21). SQLite stores
// a bound string whole on Node 24 and Deno 2.9 alike, and hands a user
// function its whole argument, but Deno 2.9's node:sqlite hands JS a read
// TEXT cut at its first NUL (get, all, iterate, arrays mode). A stored NUL
// can only stand in a column whose check admits it: the free-text columns
// below. Every other text column holds an id, a code or a word of a
// vocabulary (no NUL passes its check at startup) or JSON.stringify's
// output, which escapes a NUL as `\u0000` (but a chunk's payload kept as its
// raw text, P-STO-42, which is free text). So on a runtime that cuts, the
// reads of a free-text column select a value holding a NUL as its BLOB
// (its UTF-8 bytes), and rows.ts text() decodes it; a runtime that reads
// whole texts keeps the plain `*` and pays nothing.
import type { DatabaseSync } from "node:sqlite";
import { cutsAtNul, NUL_PROBE_SQL, wholeTextItem } from "../domain/whole-text.ts";

// The select item and the decoding are shared with the group memory profile (domain/whole-text.ts).
export { textOf, wholeTextItem } from "../domain/whole-text.ts";

/**
 * The text columns whose check at startup admits any text (validators.ts
 * shortText: a NUL included): values an agent or a client supplies.
 */
export const FREE_TEXT_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  // payload: a chunk's raw text (journal-rules.ts rawChunkText, P-STO-42); a JSON payload holds no NUL (startup proves it).
  journal: ["message_id", "payload"],
  interactions: ["native_request_id", "outcome"],
  provider_sessions: ["native_session_id"],
  audit: ["subject_id"],
  preparation_markers: ["native_mode_requested"],
};

/**
 * Free-text columns that hold a NUL only in rows matching a condition: a
 * journal payload is free text only as a chunk's raw text (metadata `[]`,
 * P-STO-42); a JSON payload holds none (startup proves it). A reader of
 * validated rows searches only those rows' values for a NUL.
 */
const FREE_ONLY_WHERE: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  journal: { payload: "\"metadata\" = '[]'" },
};

/** This runtime's answer, once known: a fact of its node:sqlite, the same for every connection. */
let cutsSeen: boolean | undefined;

/**
 * Whether this runtime's node:sqlite hands JS a row's text cut at its first
 * NUL (Deno 2.9's does, Node 24's does not), probed once per process.
 */
export function readsCutAtNul(db: DatabaseSync): boolean {
  if (cutsSeen === undefined) {
    cutsSeen = cutsAtNul((db.prepare(NUL_PROBE_SQL).get() as { v?: unknown } | undefined)?.v);
  }
  return cutsSeen;
}

/**
 * The select list of every column of `table`, for readers of validated rows:
 * `*` where texts are read whole, else each column by name, a free-text one
 * through wholeTextItem (or its search limited to FREE_ONLY_WHERE's rows).
 */
export function allColumns(db: DatabaseSync, table: string): string {
  const free = FREE_TEXT_COLUMNS[table] ?? [];
  if (free.length === 0 || !readsCutAtNul(db)) return "*";
  const names = (db.prepare(`SELECT name FROM pragma_table_info('${table}')`).all() as { name: string }[]).map((c) => c.name);
  const where = FREE_ONLY_WHERE[table] ?? {};
  return names.map((name) => (free.includes(name) ? wholeTextItem(`"${name}"`, name, where[name]) : `"${name}"`)).join(", ");
}

/** A free-text `column` as a select item kept whole (plain where texts are read whole). */
export function freeTextColumn(db: DatabaseSync, column: string): string {
  return readsCutAtNul(db) ? wholeTextItem(column) : column;
}
