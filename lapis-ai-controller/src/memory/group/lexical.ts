// Lexical search over the FTS5 index with SQLite's bm25(). The query is cut
// into the shared tokenizer's tokens (the index holds the same tokens, so
// both profiles agree on what a word is) and OR-ed as quoted terms, and the
// match is ANDed with the asked partitions' scope tokens: only active rows of
// those partitions are ever matched, so nothing else is scored, ordered or
// limited. Ties break like the shared ranking: more recent, then smaller id.
import { compareRecency, tokenize } from "../ranking.ts";
import type { GroupDatabase, SqlRow } from "./database-port.ts";

/** A lexical hit: the record row, id, update time and BM25 score (higher is better). */
export type LexicalHit = { readonly rowNo: number; readonly id: string; readonly updatedAt: string; readonly score: number };

/** Query terms a search uses at most (the rest are ignored). */
export const MAX_QUERY_TERMS = 32;

/** The FTS5 MATCH expression of a query's terms, or null when it has no token. */
export function matchExpression(query: string): string | null {
  const terms = [...new Set(tokenize(query))].slice(0, MAX_QUERY_TERMS);
  if (terms.length === 0) return null;
  return terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(" OR ");
}

/** The full MATCH: the partitions' scope tokens AND the query's terms. */
function scopedMatch(partitionNos: readonly number[], terms: string): string {
  return `fts_scope : (${partitionNos.map((n) => `p${Math.trunc(n)}`).join(" OR ")}) AND fts_body : (${terms})`;
}

const SCORED = "SELECT rowid AS no, bm25(group_records_fts, 1.0, 0.0) AS score FROM group_records_fts WHERE group_records_fts MATCH ? ORDER BY score LIMIT ?";
const TIED = `SELECT r.no AS no, bm25(group_records_fts, 1.0, 0.0) AS score FROM group_records_fts JOIN group_records r ON r.no = group_records_fts.rowid
  WHERE group_records_fts MATCH ? ORDER BY score, r.updated_at DESC, r.id LIMIT ?`;

/** Rows fetched beyond the cut so that a group of equal scores at the cut is usually seen whole. */
function window(depth: number): number {
  return Math.min(depth * 4 + 40, depth + 5_000);
}

/** The best `depth` active rows of `partitionNos` for `query`, best first. */
export function lexicalSearch(db: GroupDatabase, partitionNos: readonly number[], query: string, depth: number): LexicalHit[] {
  const terms = matchExpression(query);
  if (terms === null || partitionNos.length === 0 || depth < 1) return [];
  const match = scopedMatch(partitionNos, terms);
  const size = window(depth);
  let scored = db.all(SCORED, [match, size]);
  if (scored.length > depth) {
    // bm25() is lower-is-better. Rows scoring like the last kept one are tied with it; when
    // that group may continue past the window, SQLite orders the ties itself.
    const cut = Number((scored[depth - 1] as SqlRow).score);
    if (scored.length === size && Number((scored[size - 1] as SqlRow).score) === cut) scored = db.all(TIED, [match, depth]);
    else scored = scored.filter((r) => Number(r.score) <= cut);
  }
  if (scored.length === 0) return [];
  const marks = scored.map(() => "?").join(", ");
  const meta = new Map(db.all(`SELECT no, id, updated_at FROM group_records WHERE no IN (${marks})`, scored.map((r) => r.no as number)).map((r) => [Number(r.no), r]));
  const hits: LexicalHit[] = [];
  for (const r of scored) {
    const m = meta.get(Number(r.no));
    if (m !== undefined) hits.push({ rowNo: Number(r.no), id: String(m.id), updatedAt: String(m.updated_at), score: -Number(r.score) });
  }
  return hits.sort((a, b) => (a.score !== b.score ? b.score - a.score : compareRecency(a, b))).slice(0, depth);
}
