// What every vault operation shares: the injected ports, the clock and id
// source, the capped limits, memory references (`partition:id`), the content
// hash exclusions and duplicates are keyed on, and the one checked write
// path (serialize, scan through the redaction port, put with revision).
import { createHash, randomUUID } from "node:crypto";
import type { EntryRedactor } from "../../domain/redaction-port.ts";
import { memoryErr, memoryOk, type MemoryRecordStore, type MemoryResult, type StoredRecord } from "../ports.ts";
import { termStats, type TermStats } from "../ranking.ts";
import { scanMemoryTexts } from "../redaction.ts";
import { episodeText, ID_PATTERN, parseEpisode, writeEpisode, type Episode } from "./episode.ts";
import { PARTITION_PATTERN } from "./store-rules.ts";

/** The vault operations' limits; each is capped. */
export type VaultLimits = {
  /** Longest memory text, in UTF-16 code units. */
  readonly maxTextChars: number;
  readonly maxSources: number;
  readonly maxTags: number;
  /** Default and most candidates one search answers. */
  readonly searchLimit: number;
  readonly maxSearchLimit: number;
  readonly maxQueryChars: number;
  /** The consolidation lease's lifetime. */
  readonly leaseMs: number;
  /** Distinct source refs that promote a single episode at consolidation. */
  readonly promoteSources: number;
  /** Records whose derived search facts are kept between searches. */
  readonly maxDerived: number;
};

export const VAULT_LIMIT_DEFAULTS: VaultLimits = {
  maxTextChars: 16_384, maxSources: 32, maxTags: 16, searchLimit: 8, maxSearchLimit: 100, maxQueryChars: 4_096, leaseMs: 60_000, promoteSources: 2, maxDerived: 50_000,
};
export const VAULT_LIMIT_CAPS: VaultLimits = {
  maxTextChars: 262_144, maxSources: 256, maxTags: 64, searchLimit: 100, maxSearchLimit: 1_000, maxQueryChars: 65_536, leaseMs: 600_000, promoteSources: 64, maxDerived: 500_000,
};

/** The ports and policies one vault memory runs with. */
export type VaultContext = {
  readonly store: MemoryRecordStore;
  readonly redactor: EntryRedactor;
  /** The current time as an episode timestamp (UTC, milliseconds). */
  readonly now: () => string;
  /** A fresh record id (matching the id grammar). */
  readonly newId: () => string;
  readonly limits: VaultLimits;
  /** What was derived from each record's content (episode, text, hash, term stats), reused while the content is the same. */
  readonly derived: Map<string, Derived>;
};

/** What search derives from a record; recomputed whenever the record's content differs. */
export type Derived = { readonly content: string; readonly episode: Episode; readonly text: string; readonly hash: string; readonly stats: TermStats };

export type VaultOptions = {
  readonly store: MemoryRecordStore;
  readonly redactor: EntryRedactor;
  readonly now?: () => string;
  readonly newId?: () => string;
  readonly limits?: Partial<VaultLimits>;
};

/** Builds the context; a limit that is not a positive integer within its cap throws (a caller bug). */
export function vaultContext(options: VaultOptions): VaultContext {
  const limits: Record<string, number> = {};
  for (const key of Object.keys(VAULT_LIMIT_DEFAULTS) as (keyof VaultLimits)[]) {
    const value = options.limits?.[key] ?? VAULT_LIMIT_DEFAULTS[key];
    if (!Number.isSafeInteger(value) || value < 1 || value > VAULT_LIMIT_CAPS[key]) throw new RangeError(`vault memory limit ${key} must be an integer in 1..${VAULT_LIMIT_CAPS[key]}`);
    limits[key] = value;
  }
  return {
    store: options.store,
    redactor: options.redactor,
    now: options.now ?? (() => new Date().toISOString()),
    newId: options.newId ?? (() => `ep-${Date.now().toString(36)}-${randomUUID().slice(0, 8)}`),
    limits: limits as VaultLimits,
    derived: new Map(),
  };
}

/** The derived facts of a record (null when it is not a schema-1 episode of that id), from the cache while its content is unchanged. */
export function derive(ctx: VaultContext, record: StoredRecord): Derived | null {
  const key = formatRef(record);
  const cached = ctx.derived.get(key);
  if (cached !== undefined && cached.content === record.content) return cached;
  const episode = episodeOf(record);
  if (episode === null) {
    ctx.derived.delete(key);
    return null;
  }
  const text = episodeText(episode);
  const fresh: Derived = { content: record.content, episode, text, hash: contentHash(text), stats: termStats(text) };
  if (cached === undefined && ctx.derived.size >= ctx.limits.maxDerived) ctx.derived.clear(); // bounded: start over rather than grow
  ctx.derived.set(key, fresh);
  return fresh;
}

/** A memory reference: `partition:id`, the provenance id candidates carry (it fits the protocol's id grammar). */
export type MemoryRef = { readonly partition: string; readonly id: string };

export function formatRef(ref: MemoryRef): string {
  return `${ref.partition}:${ref.id}`;
}

export function parseRef(ref: string): MemoryRef | null {
  const colon = ref.indexOf(":");
  const partition = ref.slice(0, colon);
  const id = ref.slice(colon + 1);
  return colon > 0 && PARTITION_PATTERN.test(partition) && ID_PATTERN.test(id) ? { partition, id } : null;
}

/** The hash duplicates and exclusions are keyed on: NFKC, lower case, whitespace collapsed. */
export function contentHash(text: string): string {
  const normal = text.normalize("NFKC").toLowerCase().replace(/\s+/gu, " ").trim();
  return createHash("sha256").update(normal, "utf8").digest("hex");
}

/** A stored record parsed as an episode whose id matches its file. */
export function episodeOf(record: StoredRecord): Episode | null {
  const parsed = parseEpisode(record.content);
  return parsed.ok && parsed.value.id === record.id ? parsed.value : null;
}

/** Reads one episode; a missing record is `memory_record_not_found`, an unparsable one `memory_record_invalid`. */
export async function readEpisode(ctx: VaultContext, ref: MemoryRef): Promise<MemoryResult<{ record: StoredRecord; episode: Episode }>> {
  const got = await ctx.store.get(ref.partition, ref.id);
  if (!got.ok) return got;
  if (got.value === null) return memoryErr("memory_record_not_found");
  const episode = episodeOf(got.value);
  return episode === null ? memoryErr("memory_record_invalid") : memoryOk({ record: got.value, episode });
}

/**
 * The one write path: serialize (and re-parse) the episode, scan the whole
 * document through the redaction port, then put it replacing `expectedRevision`.
 */
export async function writeChecked(ctx: VaultContext, partition: string, episode: Episode, expectedRevision: number): Promise<MemoryResult<StoredRecord>> {
  const written = writeEpisode(episode);
  if (!written.ok) return memoryErr("memory_record_invalid");
  const scanned = scanMemoryTexts(ctx.redactor, [written.content]);
  if (!scanned.ok) return scanned;
  return ctx.store.put({ partition, id: episode.id, revision: episode.revision, content: written.content }, expectedRevision);
}

/** The memory text of an episode (re-exported for the operations). */
export { episodeText };
