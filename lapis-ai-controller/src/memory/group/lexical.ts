// Lexical search over the FTS5 index with SQLite's bm25(). The query is cut
// into the shared tokenizer's tokens (the index holds the same tokens, so
// both profiles agree on what a word is) and OR-ed as quoted terms. The
// partition and lifecycle filter is part of the same statement, so only rows
// of the asked partitions are ever scored, ordered or limited.
import { tokenize } from "../ranking.ts";
import type { GroupDatabase } from "./database-port.ts";

/** A lexical hit: the record row, id, update time and BM25 score (higher is better). */
export type LexicalHit = { readonly rowNo: number; readonly id: string; readonly updatedAt: string; readonly score: number };

/** Query terms a search uses at most (the rest are ignored). */
export const MAX_QUERY_TERMS = 32;

/** The FTS5 MATCH expression of a query, or null when it has no token. */
export function matchExpression(query: string): string | null {
  const terms = [...new Set(tokenize(query))].slice(0, MAX_QUERY_TERMS);
  if (terms.length === 0) return null;
  return terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(" OR ");
}

/** The best `depth` active rows of `partitionNos` for `query`, best first (ties: newer, then smaller id). */
export function lexicalSearch(db: GroupDatabase, partitionNos: readonly number[], query: string, depth: number): LexicalHit[] {
  const match = matchExpression(query);
  if (match === null || partitionNos.length === 0 || depth < 1) return [];
  const marks = partitionNos.map(() => "?").join(", ");
  const rows = db.all(
    `SELECT r.no AS no, r.id AS id, r.updated_at AS updated_at, bm25(group_records_fts) AS score
       FROM group_records_fts JOIN group_records r ON r.no = group_records_fts.rowid
      WHERE group_records_fts MATCH ? AND r.partition_no IN (${marks}) AND r.status = 'active'
      ORDER BY score, r.updated_at DESC, r.id LIMIT ?`,
    [match, ...partitionNos, depth],
  );
  return rows.map((r) => ({ rowNo: Number(r.no), id: String(r.id), updatedAt: String(r.updated_at), score: -Number(r.score) }));
}
