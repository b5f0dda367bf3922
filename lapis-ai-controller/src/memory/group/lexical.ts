// Lexical search over the FTS5 index with SQLite's bm25(). The query is cut
// into the shared tokenizer's tokens (the index holds the same tokens, so
// both profiles agree on what a word is) and OR-ed as quoted terms, and the
// match is ANDed with the asked partitions' scope tokens: only active rows of
// those partitions are ever matched, so nothing else is scored, ordered or
// limited. Ties break like the shared ranking: more recent, then smaller id.
// When a query holds common terms, bm25() runs only on the rows holding one
// of its rare terms, where that provably gives the same answer
// (lexical-bound.ts).
import { compareRecency, tokenize } from "../ranking.ts";
import { inList, type GroupDatabase, type SqlRow } from "./database-port.ts";
import { prunedHolds, prunePlan, quoted, type PruneOptions } from "./lexical-bound.ts";

/** A lexical hit: the record row, id, update time and BM25 score (higher is better). */
export type LexicalHit = { readonly rowNo: number; readonly id: string; readonly updatedAt: string; readonly score: number };

/** Query terms a search uses at most (the rest are ignored). */
export const MAX_QUERY_TERMS = 32;

/** The distinct terms a search uses, in query order. */
export function queryTerms(query: string): string[] {
  return [...new Set(tokenize(query))].slice(0, MAX_QUERY_TERMS);
}

/** The FTS5 MATCH expression of a query's terms, or null when it has no token. */
export function matchExpression(query: string): string | null {
  const terms = queryTerms(query);
  return terms.length === 0 ? null : terms.map(quoted).join(" OR ");
}

/** The full MATCH: the partitions' scope tokens AND the query's terms. */
function scopedMatch(partitionNos: readonly number[], terms: string): string {
  return `fts_scope : (${partitionNos.map((n) => `p${Math.trunc(n)}`).join(" OR ")}) AND fts_body : (${terms})`;
}

const SCORED = "SELECT rowid AS no, bm25(group_records_fts, 1.0, 0.0) AS score FROM group_records_fts WHERE group_records_fts MATCH ? ORDER BY score LIMIT ?";
const TIED = `SELECT r.no AS no, bm25(group_records_fts, 1.0, 0.0) AS score FROM group_records_fts JOIN group_records r ON r.no = group_records_fts.rowid
  WHERE group_records_fts MATCH ? ORDER BY score, r.updated_at DESC, r.id LIMIT ?`;
// The same statements limited to the rows holding an essential term. `+rowid` keeps the filter out of
// FTS5 (a rowid constraint there would restart the cursor, and bm25()'s idf count, per row); SQLite
// computes the result columns, bm25() among them, only for rows that pass the WHERE clause.
const ESSENTIAL = "+rowid IN (SELECT rowid FROM group_records_fts WHERE group_records_fts MATCH ?)";
const SCORED_ESSENTIAL = SCORED.replace("MATCH ? ORDER", `MATCH ? AND ${ESSENTIAL} ORDER`);
const TIED_ESSENTIAL = TIED.replace("MATCH ? ORDER", `MATCH ? AND ${ESSENTIAL.replace("+rowid", "+group_records_fts.rowid")} ORDER`);

/** Summed document counts the common terms must reach before the pruned path is tried. */
export const PRUNE_DEFAULTS: PruneOptions = { from: 2_000 };

/** Rows fetched beyond the cut so that a group of equal scores at the cut is usually seen whole. */
function window(depth: number): number {
  return Math.min(depth * 4 + 40, depth + 5_000);
}

/** The rows bm25() ranks best (at most `size`), on the pruned path when its check holds; `essential` says which path. */
function scoredRows(db: GroupDatabase, match: string, terms: readonly string[], depth: number, size: number, prune: PruneOptions): { rows: SqlRow[]; essential: string | null } {
  const plan = prunePlan(db, terms, depth, prune);
  if (plan !== null) {
    const rows = db.all(SCORED_ESSENTIAL, [match, plan.essential, size]);
    if (prunedHolds(rows, depth, plan)) return { rows, essential: plan.essential };
  }
  return { rows: db.all(SCORED, [match, size]), essential: null };
}

/** The best `depth` active rows of `partitionNos` for `query`, best first. */
export function lexicalSearch(db: GroupDatabase, partitionNos: readonly number[], query: string, depth: number, prune: PruneOptions = PRUNE_DEFAULTS): LexicalHit[] {
  const terms = queryTerms(query);
  if (terms.length === 0 || partitionNos.length === 0 || depth < 1) return [];
  const match = scopedMatch(partitionNos, terms.map(quoted).join(" OR "));
  const size = window(depth);
  const found = scoredRows(db, match, terms, depth, size, prune);
  let scored = found.rows;
  if (scored.length > depth) {
    // bm25() is lower-is-better. Rows scoring like the last kept one are tied with it; when
    // that group may continue past the window, SQLite orders the ties itself.
    const cut = Number((scored[depth - 1] as SqlRow).score);
    if (scored.length === size && Number((scored[size - 1] as SqlRow).score) === cut) {
      scored = found.essential === null ? db.all(TIED, [match, depth]) : db.all(TIED_ESSENTIAL, [match, found.essential, depth]);
    } else scored = scored.filter((r) => Number(r.score) <= cut);
  }
  if (scored.length === 0) return [];
  const list = inList(scored.map((r) => r.no as number));
  const meta = new Map(db.all(`SELECT no, id, updated_at FROM group_records WHERE no IN (${list.marks})`, list.params).map((r) => [Number(r.no), r]));
  const hits: LexicalHit[] = [];
  for (const r of scored) {
    const m = meta.get(Number(r.no));
    if (m !== undefined) hits.push({ rowNo: Number(r.no), id: String(m.id), updatedAt: String(m.updated_at), score: -Number(r.score) });
  }
  return hits.sort((a, b) => (a.score !== b.score ? b.score - a.score : compareRecency(a, b))).slice(0, depth);
}
