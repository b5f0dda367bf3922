// Search: the partitions asked for are read and filtered (active records,
// not excluded) BEFORE anything is scored, so another partition's records
// can neither appear nor shift the scores. Ranking is the shared policy
// (ranking.ts). Each ranked record is screened through the redaction port
// before it becomes a candidate; refused ones are reported by id only.
import { createHash } from "node:crypto";
import { memoryErr, memoryOk, type MemoryCandidate, type MemoryResult } from "../ports.ts";
import { compareRecency, rankLexical, tokenize, type TermStats } from "../ranking.ts";
import { screenCandidates } from "../redaction.ts";
import { PARTITION_PATTERN } from "./store-rules.ts";
import { contentHash, derive, episodeOf, episodeText, formatRef, parseRef, type VaultContext } from "./vault-context.ts";

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

type Doc = { id: string; text: string; updatedAt: string; stats: TermStats; candidate: MemoryCandidate };

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
      const derived = derive(ctx, record);
      const ref = formatRef(record);
      if (derived === null) {
        invalid.push(ref);
        continue;
      }
      const { episode, text } = derived;
      if (episode.state !== "active" || hashes.has(derived.hash)) continue;
      const candidate: MemoryCandidate = { id: ref, text, score: 0, updatedAt: episode.updated, sources: episode.sources.map((s) => ({ ...s })), origin: "recall" };
      docs.push({ id: ref, text, updatedAt: episode.updated, stats: derived.stats, candidate });
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

/** The evidence location of a memory's current revision: the document itself at that revision, with its bytes' hash. */
export type RecordLocation = { readonly ref: string; readonly sha256: string };

/**
 * One memory by ref, if it lies in `partitions`, is active and not excluded,
 * and passes the screening; anything else is `memory_record_not_found`
 * (whether it exists elsewhere is not revealed). Its location names the
 * revision read, so a later change is noticed.
 */
export async function readMemory(ctx: VaultContext, refText: string, partitions: readonly string[]): Promise<MemoryResult<{ candidate: MemoryCandidate; location: RecordLocation }>> {
  const ref = parseRef(refText);
  if (ref === null || !partitions.includes(ref.partition)) return memoryErr("memory_record_not_found");
  const got = await ctx.store.get(ref.partition, ref.id);
  if (!got.ok) return got;
  const episode = got.value === null ? null : episodeOf(got.value);
  if (got.value === null || episode === null || episode.state !== "active") return memoryErr("memory_record_not_found");
  const text = episodeText(episode);
  const excluded = await ctx.store.exclusions(ref.partition);
  if (!excluded.ok) return excluded;
  if (excluded.value.some((e) => e.sha256 === contentHash(text))) return memoryErr("memory_record_not_found");
  const location = { ref: `vault:${formatRef(ref)}@${episode.revision}`, sha256: createHash("sha256").update(got.value.content, "utf8").digest("hex") };
  const candidate: MemoryCandidate = { id: formatRef(ref), text, score: 0, updatedAt: episode.updated, sources: [...episode.sources.map((s) => ({ ...s })), location], origin: "recall" };
  const screened = screenCandidates(ctx.redactor, [candidate]);
  if (!screened.ok) return screened;
  return screened.value.kept.length === 1 ? memoryOk({ candidate, location }) : memoryErr("candidate_rejected");
}
