// Exact top-k pruning for the lexical search (MaxScore). bm25() gives a row
// the sum over the query's terms of idf(term) * f(k1 + 1) / (f + k1 * K),
// with K > 0, so a term adds strictly less than idf(term) * (k1 + 1) to any
// row. Split the terms into the rare ("essential") ones and the common
// rest: a row holding no essential term scores strictly below
// U = (k1 + 1) * sum of the common terms' idf. When the best rows holding an
// essential term already reach U at the cut, no other row can enter the
// answer or tie at its cut, so only those rows need bm25(). The search then
// runs the same statement (same phrases, same order, so the same scores to
// the last bit) with the rows limited to the essential ones; when the check
// fails it runs the full search. The plan only chooses a path: the answer is
// the same either way.
import type { GroupDatabase, SqlValue } from "./database-port.ts";

/** FTS5's bm25() constant k1 (b = 0.75 does not enter the bound). */
const K1 = 1.2;
/** FTS5 floors a non-positive idf to this. */
const IDF_FLOOR = 1e-6;
/** Relative slack over floating-point rounding (the sums here have a few terms, each off by an ulp at most). */
const SLACK = 1e-9;

/** The quoted FTS5 phrase of one query token. */
export const quoted = (term: string): string => `"${term.replaceAll('"', '""')}"`;

/** What the pruned search runs: the essential terms' MATCH and the score a row at the cut must reach. */
export type PrunePlan = { readonly essential: string; readonly bound: number; readonly essentialTerms: readonly string[] };

/** One SQLite varint (the record format FTS5 also uses): its value and the next offset, or null when cut short. */
function varint(bytes: Uint8Array, at: number): [number, number] | null {
  let value = 0;
  for (let i = 0; i < 9; i++) {
    const byte = bytes[at + i];
    if (byte === undefined) return null;
    if (i === 8) return [value * 256 + byte, at + 9];
    value = value * 128 + (byte & 0x7f);
    if (byte < 0x80) return [value, at + i + 1];
  }
  return null;
}

/**
 * An upper bound of the row count bm25() uses: FTS5's own total (the first
 * varint of its averages record, row 1 of the `_data` table) and the largest
 * record number (every record has one index row), whichever is larger, so a
 * total not yet written back inside a transaction cannot make it too small.
 */
export function indexRowsBound(db: GroupDatabase): number | null {
  const block = db.get("SELECT block FROM group_records_fts_data WHERE id = 1")?.block;
  const stored = block instanceof Uint8Array ? varint(block, 0)?.[0] ?? null : null;
  const last = Number(db.get("SELECT max(no) AS n FROM group_records")?.n ?? 0);
  if (stored === null || !Number.isSafeInteger(stored) || !Number.isSafeInteger(last)) return null;
  return Math.max(stored, last);
}

/** The rows of the whole index holding `term` in the body column: the count bm25() takes its idf from. */
export function documentCount(db: GroupDatabase, term: string): number {
  return Number(db.get("SELECT count(*) AS n FROM group_records_fts WHERE group_records_fts MATCH ?", [`fts_body : ${quoted(term)}`])?.n ?? 0);
}

/** An upper bound of bm25()'s idf for a term in `hits` of `rows` rows (at least the true `rows`, exactly the true `hits`). */
export function idfBound(rows: number, hits: number): number {
  const idf = Math.log((rows - hits + 0.5) / (hits + 0.5));
  return Math.max(idf > 0 ? idf * (1 + SLACK) : idf, IDF_FLOOR);
}

/** How a plan is chosen; none of it changes an answer. */
export type PruneOptions = {
  /** Rows the common terms must hold (summed document counts) before pruning is tried; below it the full search is cheap. */
  readonly from: number;
};

/**
 * The plan for `terms` at `depth`, or null when pruning would not pay or
 * cannot work. The essential terms are the fewest rarest ones that hold
 * `depth` rows (counted over all partitions) and whose commonest idf is at
 * least U: a row holding that term once at the average length scores about
 * its idf. These choices (measured on the bench's 300 queries: the fewest
 * failed checks for the most rows left unscored) only decide whether the
 * pruned path is tried, never the answer.
 */
export function prunePlan(db: GroupDatabase, terms: readonly string[], depth: number, options: PruneOptions): PrunePlan | null {
  if (terms.length < 2 || depth < 1) return null;
  const rows = indexRowsBound(db);
  if (rows === null || rows < 1) return null;
  const counted = terms.map((term) => ({ term, hits: documentCount(db, term) })).sort((a, b) => a.hits - b.hits);
  const bounds = counted.map((c) => idfBound(rows, c.hits));
  for (let k = 1; k < counted.length; k++) {
    let held = 0;
    for (let i = 0; i < k; i++) held += (counted[i] as { hits: number }).hits;
    let common = 0;
    let commonRows = 0;
    for (let i = k; i < counted.length; i++) {
      common += (K1 + 1) * (bounds[i] as number);
      commonRows += (counted[i] as { hits: number }).hits;
    }
    if (commonRows < options.from) return null; // moving more terms into the essential set only lowers it
    if (held < depth || common > (bounds[k - 1] as number)) continue;
    const essentialTerms = counted.slice(0, k).map((c) => c.term);
    return { essential: `fts_body : (${essentialTerms.map(quoted).join(" OR ")})`, bound: common * (1 + SLACK), essentialTerms };
  }
  return null;
}

/** Whether the pruned rows answer exactly: at least `depth` of them, the one at the cut scoring at least the bound. */
export function prunedHolds(rows: readonly Readonly<Record<string, SqlValue>>[], depth: number, plan: PrunePlan): boolean {
  const atCut = rows[depth - 1];
  return atCut !== undefined && -Number(atCut.score) >= plan.bound;
}
