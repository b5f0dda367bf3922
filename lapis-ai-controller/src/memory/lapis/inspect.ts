// Inspect: one memory with its whole revision history (each preimage a write
// kept), a listing of a partition's memories, and undo: the previous
// revision's content written back as a new revision, so undo is itself
// undoable. Undoing a forget also lifts its exclusion.
import { memoryErr, memoryOk, type MemoryResult, type MemorySource } from "../ports.ts";
import { compareRecency } from "../ranking.ts";
import { parseEpisode, type Episode, type EpisodeState, type EpisodeTier } from "./episode.ts";
import { PARTITION_PATTERN } from "./store-rules.ts";
import { contentHash, episodeOf, episodeText, formatRef, parseRef, readEpisode, writeChecked, type VaultContext } from "./vault-context.ts";

/** One revision of a memory: its parsed episode, or null when that preimage is not a schema-1 document. */
export type RevisionView = { readonly revision: number; readonly content: string; readonly episode: Episode | null };

export type Inspection = {
  readonly ref: string;
  readonly current: Episode;
  readonly content: string;
  /** Earlier revisions, oldest first. */
  readonly history: RevisionView[];
};

/** A memory as a listing shows it. */
export type MemorySummary = {
  readonly ref: string;
  readonly text: string;
  readonly tier: EpisodeTier;
  readonly state: EpisodeState;
  readonly revision: number;
  readonly updated: string;
  readonly sources: readonly MemorySource[];
};

/** One memory and its history; `ref` is `partition:id`. */
export async function inspect(ctx: VaultContext, refText: string): Promise<MemoryResult<Inspection>> {
  const ref = parseRef(refText);
  if (ref === null) return memoryErr("memory_record_invalid");
  const read = await readEpisode(ctx, ref);
  if (!read.ok) return read;
  const preimages = await ctx.store.preimages(ref.partition, ref.id);
  if (!preimages.ok) return preimages;
  const history = preimages.value.map((p) => {
    const parsed = parseEpisode(p.content);
    return { revision: p.revision, content: p.content, episode: parsed.ok ? parsed.value : null };
  });
  return memoryOk({ ref: formatRef(ref), current: read.value.episode, content: read.value.record.content, history });
}

/** The memories of one partition (active ones unless `all`), most recently updated first. */
export async function listMemories(ctx: VaultContext, partition: string, options: { all?: boolean } = {}): Promise<MemoryResult<MemorySummary[]>> {
  if (!PARTITION_PATTERN.test(partition)) return memoryErr("memory_record_invalid");
  const listed = await ctx.store.list(partition);
  if (!listed.ok) return listed;
  const out: MemorySummary[] = [];
  for (const record of listed.value) {
    const e = episodeOf(record);
    if (e === null || (options.all !== true && e.state !== "active")) continue;
    out.push({ ref: formatRef(record), text: episodeText(e), tier: e.tier, state: e.state, revision: e.revision, updated: e.updated, sources: e.sources });
  }
  return memoryOk(out.sort((a, b) => compareRecency({ id: a.ref, updatedAt: a.updated }, { id: b.ref, updatedAt: b.updated })));
}

/**
 * Writes the revision before the current one back as a new revision.
 * `expectedRevision` guards against undoing a write the caller has not seen.
 */
export async function undo(ctx: VaultContext, refText: string, expectedRevision: number): Promise<MemoryResult<{ ref: string; revision: number; restored: number }>> {
  const ref = parseRef(refText);
  if (ref === null) return memoryErr("memory_record_invalid");
  const read = await readEpisode(ctx, ref);
  if (!read.ok) return read;
  const current = read.value.episode;
  if (current.revision !== expectedRevision) return memoryErr("memory_revision_conflict");
  const preimages = await ctx.store.preimages(ref.partition, ref.id);
  if (!preimages.ok) return preimages;
  const previous = preimages.value.find((p) => p.revision === current.revision - 1);
  if (previous === undefined) return memoryErr("memory_history_empty");
  const parsed = parseEpisode(previous.content);
  if (!parsed.ok || parsed.value.id !== ref.id) return memoryErr("memory_record_invalid");
  const restored: Episode = { ...parsed.value, revision: current.revision + 1, updated: ctx.now() };
  const put = await writeChecked(ctx, ref.partition, restored, current.revision);
  if (!put.ok) return put;
  // Lifted only after the write: a failure in between leaves the memory excluded (hidden), never back unguarded.
  if (current.state === "forgotten" && restored.state !== "forgotten") {
    const lifted = await ctx.store.removeExclusion(ref.partition, contentHash(episodeText(restored)));
    if (!lifted.ok) return lifted;
  }
  return memoryOk({ ref: formatRef(ref), revision: restored.revision, restored: previous.revision });
}
