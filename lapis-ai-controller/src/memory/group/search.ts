// Group search: partitions are resolved and filtered first, then the lexical
// ranking (FTS5 bm25) and, in hybrid mode, the vector ranking (brute-force
// cosine over the partitions' vectors) are fused by reciprocal rank with the
// shared tie-break (more recent first, then smaller id). Only a hybrid search
// embeds anything: its query text, once (a live vector query).
import { memoryErr, memoryOk, type EmbeddingProvider, type MemoryResult } from "../ports.ts";
import { fuseRrf } from "../ranking.ts";
import { inList, type GroupDatabase } from "./database-port.ts";
import { embedSafely } from "./drain.ts";
import { lexicalSearch } from "./lexical.ts";
import { validPartition, type GroupLimits, type GroupRecord } from "./records.ts";
import { recordOf, type GroupRecordStore } from "./store.ts";
import type { VectorIndex } from "./vectors.ts";
import { recordColumns } from "./whole-text.ts";

/** One search. */
export type GroupSearchQuery = {
  /** The partitions searched; nothing outside them is scored or returned. */
  readonly partitions: readonly string[];
  readonly text: string;
  /** Hits answered (default 10, at most `limits.maxSearchLimit`). */
  readonly limit?: number;
  /** `lexical` (default) or `hybrid` (lexical and vector, fused). */
  readonly mode?: "lexical" | "hybrid";
};

/** A ranked record; `score` is higher-is-better within one answer (BM25, or the fused RRF score). */
export type GroupHit = { readonly record: GroupRecord; readonly score: number };

/** The answer; `vector` says whether the vector ranking took part, or why not. */
export type GroupSearchResult = { readonly hits: GroupHit[]; readonly vector: "used" | "off" | "embedding_failed" };

/** What a search reads. */
export type SearchDeps = {
  readonly db: GroupDatabase;
  readonly store: GroupRecordStore;
  readonly limits: GroupLimits;
  readonly provider: EmbeddingProvider | null;
  readonly index: VectorIndex | null;
  readonly stop: AbortSignal;
};

type Ranked = { readonly rowNo: number; readonly id: string; readonly updatedAt: string };

function records(db: GroupDatabase, partitionOf: Map<number, string>, ranked: readonly { item: Ranked; score: number }[]): GroupHit[] {
  if (ranked.length === 0) return [];
  const list = inList(ranked.map((r) => r.item.rowNo));
  const rows = new Map(db.all(`SELECT ${recordColumns(db)} FROM group_records WHERE no IN (${list.marks})`, list.params).map((row) => [Number(row.no), row]));
  const hits: GroupHit[] = [];
  for (const { item, score } of ranked) {
    const row = rows.get(item.rowNo);
    const partition = row === undefined ? undefined : partitionOf.get(Number(row.partition_no));
    if (row !== undefined && partition !== undefined && row.status === "active") hits.push({ record: recordOf(row, partition), score });
  }
  return hits;
}

/** Runs one search. */
export async function searchGroup(deps: SearchDeps, query: GroupSearchQuery): Promise<MemoryResult<GroupSearchResult>> {
  const { db, store, limits } = deps;
  if (!Array.isArray(query.partitions) || query.partitions.length === 0 || query.partitions.length > limits.maxPartitionsPerSearch) return memoryErr("memory_record_invalid");
  if (!query.partitions.every(validPartition) || typeof query.text !== "string") return memoryErr("memory_record_invalid");
  const limit = query.limit ?? 10;
  if (!Number.isInteger(limit) || limit < 1 || limit > limits.maxSearchLimit) return memoryErr("memory_limit_exceeded");
  const partitionOf = new Map<number, string>();
  for (const p of query.partitions) {
    const no = store.partitionNo(p);
    if (no !== null) partitionOf.set(no, p);
  }
  const nos = [...partitionOf.keys()];
  const hybrid = query.mode === "hybrid";
  if (!hybrid) {
    const lexical = lexicalSearch(db, nos, query.text, limit);
    return memoryOk({ hits: records(db, partitionOf, lexical.map((h) => ({ item: h, score: h.score }))), vector: "off" });
  }
  const depth = Math.max(limit, limits.candidateDepth);
  const lexical = lexicalSearch(db, nos, query.text, depth);
  if (deps.provider === null || deps.index === null) {
    return memoryOk({ hits: records(db, partitionOf, lexical.slice(0, limit).map((h) => ({ item: h, score: h.score }))), vector: "off" });
  }
  if (query.text.trim() === "" || nos.length === 0) return memoryOk({ hits: [], vector: "used" });
  const embedded = await embedSafely(deps.provider, [query.text], limits.embedTimeoutMs, deps.stop);
  // Closed while the query was being embedded: the database is going away.
  if (deps.stop.aborted) return memoryErr("memory_store_failed");
  if (!embedded.ok) {
    return memoryOk({ hits: records(db, partitionOf, lexical.slice(0, limit).map((h) => ({ item: h, score: h.score }))), vector: "embedding_failed" });
  }
  const vector = deps.index.top(embedded.vectors[0] as Float32Array, new Set(nos), depth);
  const fused = fuseRrf<Ranked>([lexical, vector]).slice(0, limit);
  return memoryOk({ hits: records(db, partitionOf, fused), vector: "used" });
}
