// Ingest: a new memory becomes an episode document. Refused before anything
// is written: content that came out of recall (origin recall, or text in the
// service's recalled-memory tag; it is never stored again),
// content a forget excluded, text or source refs carrying reserved markers,
// and text the redaction port would change. Text already stored in the
// partition is not stored twice: the existing record is answered.
import { memoryErr, memoryOk, type MemoryResult, type MemorySource } from "../ports.ts";
import { carriesRecalledTag, hasReservedMarker, scanMemoryTexts } from "../redaction.ts";
import { isSha256, isSourceRef, TAG_PATTERN, type Episode } from "./episode.ts";
import { PARTITION_PATTERN } from "./store-rules.ts";
import { contentHash, derive, formatRef, writeChecked, type VaultContext } from "./vault-context.ts";

export type IngestInput = {
  readonly partition: string;
  readonly text: string;
  readonly sources?: readonly MemorySource[];
  /** Extra tags; `origin:` tags are the library's, except that `origin:recall` marks recalled content (refused). */
  readonly tags?: readonly string[];
  /** Where the text came from; a recalled candidate passed back in carries "recall" and is refused. */
  readonly origin?: "ingest" | "recall";
};

export type IngestOutcome = { readonly ref: string; readonly revision: number; readonly duplicate: boolean };

/** Sources deduplicated and sorted (ref, then hash); a marked ref is `evidence_location_invalid`. */
export function normalizeSources(sources: readonly MemorySource[], max: number): MemoryResult<MemorySource[]> {
  if (sources.length > max) return memoryErr("memory_limit_exceeded");
  for (const s of sources) {
    if (hasReservedMarker(s.ref)) return memoryErr("evidence_location_invalid");
    if (!isSourceRef(s.ref) || !isSha256(s.sha256)) return memoryErr("memory_record_invalid");
  }
  const unique = new Map(sources.map((s) => [`${s.ref}\u0000${s.sha256}`, { ref: s.ref, sha256: s.sha256 }]));
  return memoryOk([...unique.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, s]) => s));
}

function normalizeTags(tags: readonly string[], max: number): MemoryResult<string[]> {
  if (tags.includes("origin:recall")) return memoryErr("memory_recalled_content");
  if (tags.length > max) return memoryErr("memory_limit_exceeded");
  if (tags.some((t) => !TAG_PATTERN.test(t) || t.startsWith("origin:"))) return memoryErr("memory_record_invalid");
  return memoryOk([...new Set([...tags, "origin:ingest"])].sort());
}

/** Stores `input` as a new episode (revision 1), or answers the record that already holds the same text. */
export async function ingest(ctx: VaultContext, input: IngestInput): Promise<MemoryResult<IngestOutcome>> {
  if (input.origin === "recall") return memoryErr("memory_recalled_content");
  if (!PARTITION_PATTERN.test(input.partition)) return memoryErr("memory_record_invalid");
  const tags = normalizeTags(input.tags ?? [], ctx.limits.maxTags);
  if (!tags.ok) return tags;
  const text = input.text.replace(/(?:\r?\n)+$/, "");
  if (text.trim() === "") return memoryErr("memory_record_invalid");
  if (text.length > ctx.limits.maxTextChars) return memoryErr("memory_limit_exceeded");
  // Text (or a source ref) holding the service's recalled-memory tag is recall output pasted back: never stored again.
  if (carriesRecalledTag(text) || (input.sources ?? []).some((s) => carriesRecalledTag(s.ref))) return memoryErr("memory_recalled_content");
  if (hasReservedMarker(text)) return memoryErr("candidate_rejected");
  const sources = normalizeSources(input.sources ?? [], ctx.limits.maxSources);
  if (!sources.ok) return sources;
  // Scan the DTO before it is compared, indexed or written: a secret never reaches the store.
  const scanned = scanMemoryTexts(ctx.redactor, [text, ...sources.value.map((s) => s.ref), ...tags.value]);
  if (!scanned.ok) return scanned;
  const hash = contentHash(text);
  const excluded = await ctx.store.exclusions(input.partition);
  if (!excluded.ok) return excluded;
  if (excluded.value.some((e) => e.sha256 === hash)) return memoryErr("memory_excluded");
  const listed = await ctx.store.list(input.partition);
  if (!listed.ok) return listed;
  for (const record of listed.value) {
    const existing = derive(ctx, record);
    if (existing?.episode.state === "active" && existing.hash === hash) {
      return memoryOk({ ref: formatRef({ partition: input.partition, id: existing.episode.id }), revision: existing.episode.revision, duplicate: true });
    }
  }
  const at = ctx.now();
  const episode: Episode = {
    schema: 1, id: ctx.newId(), created: at, updated: at, revision: 1, tier: "episode", state: "active", supersededBy: null,
    tags: tags.value, sources: sources.value, body: `${text}\n`, newline: "\n",
  };
  const put = await writeChecked(ctx, input.partition, episode, 0);
  if (!put.ok) return put;
  return memoryOk({ ref: formatRef({ partition: input.partition, id: episode.id }), revision: 1, duplicate: false });
}
