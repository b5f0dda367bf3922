// Search: the partitions asked for are read and filtered (active records,
// not excluded) BEFORE anything is scored, so another partition's records
// can neither appear nor shift the scores. Ranking is the shared policy
// (ranking.ts). Each ranked record is screened through the redaction port
// before it becomes a candidate; refused ones are reported by id only.
import { memoryErr, memoryOk, type MemoryCandidate, type MemoryResult } from "../ports.ts";
import { compareRecency, rankLexical, tokenize } from "../ranking.ts";
import { screenCandidates } from "../redaction.ts";
import { PARTITION_PATTERN } from "./store-rules.ts";
import { contentHash, episodeOf, episodeText, formatRef, type VaultContext } from "./vault-context.ts";

export type SearchInput = {
  /** The partitions to search; nothing outside them is read. */
  readonly partitions: readonly string[];
  /** Free text; a query without words lists the most recent memories. */
  readonly query: string;
  readonly limit?: number;
};

export type SearchOutcome = {
  /** Ranked best first, at most `limit`. */
  readonly candidates: MemoryCandidate[];
  /** Records the screening refused (marker or scanner change), by ref. */
  readonly rejected: string[];
  /** Records that are not schema-1 episode documents, by ref. */
  readonly invalid: string[];
};

type Doc = { id: string; text: string; updatedAt: string; candidate: MemoryCandidate };

/** The active, non-excluded records of the partitions, as rankable documents. */
async function corpus(ctx: VaultContext, partitions: readonly string[]): Promise<MemoryResult<{ docs: Doc[]; invalid: string[] }>> {
  const docs: Doc[] = [];
  const invalid: string[] = [];
  for (const partition of [...new Set(partitions)].sort()) {
    const excluded = await ctx.store.exclusions(partition);
    if (!excluded.ok) return excluded;
    const hashes = new Set(excluded.value.map((e) => e.sha256));
    const listed = await ctx.store.list(partition);
    if (!listed.ok) return listed;
    for (const record of listed.value) {
      if (record.partition !== partition) return memoryErr("memory_store_failed"); // a store leaking partitions is refused outright
      const episode = episodeOf(record);
      const ref = formatRef(record);
      if (episode === null) {
        invalid.push(ref);
        continue;
      }
      const text = episodeText(episode);
      if (episode.state !== "active" || hashes.has(contentHash(text))) continue;
      const candidate: MemoryCandidate = { id: ref, text, score: 0, updatedAt: episode.updated, sources: episode.sources.map((s) => ({ ...s })), origin: "recall" };
      docs.push({ id: ref, text, updatedAt: episode.updated, candidate });
    }
  }
  return memoryOk({ docs, invalid });
}

/** Searches the partitions for `query`; candidates carry origin "recall" so they are never ingested again. */
export async function search(ctx: VaultContext, input: SearchInput): Promise<MemoryResult<SearchOutcome>> {
  const limit = input.limit ?? ctx.limits.searchLimit;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > ctx.limits.maxSearchLimit) return memoryErr("memory_limit_exceeded");
  if (input.query.length > ctx.limits.maxQueryChars) return memoryErr("memory_limit_exceeded");
  if (input.partitions.length === 0 || !input.partitions.every((p) => PARTITION_PATTERN.test(p))) return memoryErr("memory_record_invalid");
  const read = await corpus(ctx, input.partitions);
  if (!read.ok) return read;
  const ranked = tokenize(input.query).length === 0
    ? [...read.value.docs].sort(compareRecency).map((item) => ({ item, score: 0 }))
    : rankLexical(input.query, read.value.docs);
  const candidates: MemoryCandidate[] = [];
  const rejected: string[] = [];
  // Screen in rank order, only as far as needed to fill the answer.
  for (let at = 0; at < ranked.length && candidates.length < limit; at += limit) {
    const batch = ranked.slice(at, at + limit).map(({ item, score }) => ({ ...item.candidate, score }));
    const screened = screenCandidates(ctx.redactor, batch);
    if (!screened.ok) return screened;
    candidates.push(...screened.value.kept.slice(0, limit - candidates.length));
    rejected.push(...screened.value.rejected);
  }
  return memoryOk({ candidates, rejected, invalid: read.value.invalid });
}
