// A table's rows read for startup validation as arrays, a page of at most
// PAGE_ROWS rows at a time with all(): node:sqlite builds a row for less
// through all() than through its iterator (per row, Node about 0.95 vs 1.4 us,
// Deno 1.25 vs 2.9 us), and a page keeps the memory a read holds bounded (a
// few MB) as the iterator did. Pages follow the rowid (a seek each), inside
// the validation's one read transaction, so every row is read exactly once.
import type { DatabaseSync } from "node:sqlite";

/** The most rows one read holds: a table of at most this many is read with one all(). */
export const PAGE_ROWS = 8_192;

const MAX_SAFE = "9007199254740991";

/**
 * Calls `visit` with every row of `table` as an array of the `select` list's
 * values in its order (a paged read appends the row's rowid after them, which
 * a visitor judging the listed columns by position never reaches), until it
 * answers false; true when every row was visited. `n` is the table's row
 * count in this transaction. Paged only where `rowidIsRowid` (no column of
 * the table is named `rowid`, as in schema v1: catalog-v1.ts) and every rowid
 * reads into a number; else, above PAGE_ROWS rows, iterated.
 */
export function everyRow(db: DatabaseSync, table: string, select: string, n: number, rowidIsRowid: boolean, visit: (row: readonly unknown[]) => boolean): boolean {
  // Two scalar subqueries: SQLite seeks a lone min() or max() of the rowid. A rowid beyond a safe integer (node:sqlite cannot read it into a number) leaves lo NULL.
  const lo = n <= PAGE_ROWS || !rowidIsRowid ? null : (db.prepare(`SELECT CASE WHEN (SELECT min(rowid) FROM ${table}) >= -${MAX_SAFE}
    AND (SELECT max(rowid) FROM ${table}) < ${MAX_SAFE} THEN (SELECT min(rowid) FROM ${table}) END AS lo`).get() as { lo: number | null }).lo;
  if (lo === null) {
    const all = db.prepare(`SELECT ${select} FROM ${table}`);
    all.setReturnArrays(true);
    for (const row of (n <= PAGE_ROWS ? all.all() : all.iterate()) as Iterable<unknown[]>) if (!visit(row)) return false;
    return true;
  }
  const page = db.prepare(`SELECT ${select}, rowid FROM ${table} WHERE rowid >= ? ORDER BY rowid LIMIT ${PAGE_ROWS}`);
  page.setReturnArrays(true);
  const at = page.columns().length - 1;
  for (let from = lo; ;) {
    const rows = page.all(from) as unknown as unknown[][];
    for (const row of rows) if (!visit(row)) return false;
    if (rows.length < PAGE_ROWS) return true;
    from = ((rows[rows.length - 1] as unknown[])[at] as number) + 1;
  }
}
