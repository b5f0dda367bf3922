// Forget: the memory's text is added to the partition's exclusion list
// first (so a crash in between still keeps it out), then the record becomes
// a tombstone: state forgotten, empty body, a new revision. The preimage
// keeps the forgotten revision, so inspect shows it and undo restores it;
// re-ingesting the same text is refused as `memory_excluded`.
import { memoryErr, memoryOk, type MemoryResult } from "../ports.ts";
import type { Episode } from "./episode.ts";
import { contentHash, episodeText, formatRef, parseRef, readEpisode, writeChecked, type VaultContext } from "./vault-context.ts";

export type ForgetOutcome = { readonly ref: string; readonly revision: number; readonly alreadyForgotten: boolean };

/** Forgets `ref` (`partition:id`); `expectedRevision`, when given, must be the current revision. */
export async function forget(ctx: VaultContext, refText: string, expectedRevision?: number): Promise<MemoryResult<ForgetOutcome>> {
  const ref = parseRef(refText);
  if (ref === null) return memoryErr("memory_record_invalid");
  const read = await readEpisode(ctx, ref);
  if (!read.ok) return read;
  const current = read.value.episode;
  if (expectedRevision !== undefined && expectedRevision !== current.revision) return memoryErr("memory_revision_conflict");
  if (current.state === "forgotten") return memoryOk({ ref: formatRef(ref), revision: current.revision, alreadyForgotten: true });
  const at = ctx.now();
  const excluded = await ctx.store.addExclusion(ref.partition, { sha256: contentHash(episodeText(current)), recordId: ref.id, at });
  if (!excluded.ok) return excluded;
  const tombstone: Episode = { ...current, state: "forgotten", supersededBy: null, body: "", revision: current.revision + 1, updated: at };
  const put = await writeChecked(ctx, ref.partition, tombstone, current.revision);
  if (!put.ok) return put;
  return memoryOk({ ref: formatRef(ref), revision: tombstone.revision, alreadyForgotten: false });
}
