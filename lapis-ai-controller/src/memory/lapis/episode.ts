// Episode documents, schema 1 (docs/memory.md defines the format): a fixed,
// line-oriented front matter between `---` fences, then the body verbatim.
// The parser accepts only the canonical front matter, keeps the document's
// newline (LF or CRLF) and the body bytes, so serializing a parsed document
// gives back exactly the bytes it was read from. Anything else is refused
// with `memory_record_invalid` and a stable reason; no file text is echoed.
import type { MemoryError, MemorySource } from "../ports.ts";

/** The one schema this parser reads and writes. */
export const EPISODE_SCHEMA = 1;

export type EpisodeTier = "episode" | "promoted";
export type EpisodeState = "active" | "superseded" | "forgotten";
export type Newline = "\n" | "\r\n";

/** A parsed episode document. `body` is everything after the closing fence, verbatim. */
export type Episode = {
  readonly schema: 1;
  readonly id: string;
  readonly created: string;
  readonly updated: string;
  readonly revision: number;
  readonly tier: EpisodeTier;
  readonly state: EpisodeState;
  /** The record that replaced this one; set exactly when `state` is superseded. */
  readonly supersededBy: string | null;
  /** Sorted as written; exactly one is `origin:ingest` or `origin:recall`. */
  readonly tags: readonly string[];
  readonly sources: readonly MemorySource[];
  readonly body: string;
  readonly newline: Newline;
};

/** Why a document was refused (stable; docs/memory.md lists them). */
export type EpisodeParseReason =
  | "front_matter_missing"
  | "front_matter_unterminated"
  | "newline_mixed"
  | "schema_unsupported"
  | "field_missing"
  | "field_unexpected"
  | "field_invalid";

/** The front-matter keys, in the one order they are written. */
export const EPISODE_FIELDS = ["schema", "id", "created", "updated", "revision", "tier", "state", "supersededBy", "tags", "sources"] as const;
export type EpisodeField = (typeof EPISODE_FIELDS)[number];

export type EpisodeParseError = MemoryError & { readonly code: "memory_record_invalid"; readonly reason: EpisodeParseReason; readonly field?: EpisodeField };
export type EpisodeParse = { readonly ok: true; readonly value: Episode } | { readonly ok: false; readonly error: EpisodeParseError };

/**
 * Record ids and other file-safe names: lower-case letters, digits, `.`, `_`, `-`, starting with a letter or
 * digit, at most 95 characters (so `partition:id` stays within the protocol's 128-character ids).
 */
export const ID_PATTERN = /^[a-z0-9][a-z0-9._-]{0,94}$/;
/** Tags: lower-case, may carry a `prefix:` such as `origin:`. */
export const TAG_PATTERN = /^[a-z0-9][a-z0-9:._/-]{0,63}$/;
/** UTC timestamps with optional milliseconds. */
export const TIME_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;
const SHA256 = /^[0-9a-f]{64}$/;
const REVISION = /^[1-9][0-9]{0,14}$/;
// A source ref: printable, no surrounding space, no control characters (so it stays one line).
// deno-lint-ignore no-control-regex
const REF = /^[^\s\u0000-\u001f\u007f](?:[^\u0000-\u001f\u007f]{0,510}[^\s\u0000-\u001f\u007f])?$/;

/** True when `value` is a valid time of the format; also checks the calendar. */
export function isEpisodeTime(value: string): boolean {
  return TIME_PATTERN.test(value) && !Number.isNaN(Date.parse(value)) && new Date(value).toISOString().slice(0, 19) === value.slice(0, 19);
}

/** True when `ref` may be written as a source reference. */
export function isSourceRef(ref: string): boolean {
  return REF.test(ref);
}

/** True when `sha256` is 64 lower-case hex digits. */
export function isSha256(sha256: string): boolean {
  return SHA256.test(sha256);
}

/** The origin tag of a tag list, or null when it has none or more than one. */
export function originOf(tags: readonly string[]): "ingest" | "recall" | null {
  const origins = tags.filter((t) => t.startsWith("origin:"));
  if (origins.length !== 1) return null;
  return origins[0] === "origin:ingest" ? "ingest" : origins[0] === "origin:recall" ? "recall" : null;
}

/** The memory text of an episode: its body without trailing line breaks. */
export function episodeText(episode: Pick<Episode, "body">): string {
  return episode.body.replace(/(?:\r?\n)+$/, "");
}

function refuse(reason: EpisodeParseReason, field?: EpisodeField): { ok: false; error: EpisodeParseError } {
  const error: EpisodeParseError = field === undefined
    ? { code: "memory_record_invalid", retryable: false, reason }
    : { code: "memory_record_invalid", retryable: false, reason, field };
  return { ok: false, error };
}

type Cursor = { lines: string[]; at: number };

/** Reads `key: value` for the expected key, or reports which rule the line broke. */
function take(cursor: Cursor, key: EpisodeField): { ok: true; value: string } | { ok: false; error: EpisodeParseError } {
  const line = cursor.lines[cursor.at];
  if (line === undefined) return refuse("field_missing", key);
  if (line.startsWith(`${key}: `) || line === `${key}:`) {
    cursor.at += 1;
    return { ok: true, value: line === `${key}:` ? "" : line.slice(key.length + 2) };
  }
  const lineKey = line.split(":")[0] ?? "";
  const known = EPISODE_FIELDS.indexOf(lineKey as EpisodeField);
  if (known > EPISODE_FIELDS.indexOf(key)) return refuse("field_missing", key);
  return known >= 0 ? refuse("field_unexpected", lineKey as EpisodeField) : refuse("field_unexpected");
}

/** Reads the `  - item` lines after a list key. */
function items(cursor: Cursor, prefix: string): string[] {
  const out: string[] = [];
  while (cursor.lines[cursor.at]?.startsWith(prefix) === true) out.push((cursor.lines[cursor.at++] ?? "").slice(prefix.length));
  return out;
}

function parseSources(cursor: Cursor, value: string): { ok: true; value: MemorySource[] } | { ok: false; error: EpisodeParseError } {
  if (value === "[]") return { ok: true, value: [] };
  if (value !== "") return refuse("field_invalid", "sources");
  const sources: MemorySource[] = [];
  while (cursor.lines[cursor.at]?.startsWith("  - ref: ") === true) {
    const ref = (cursor.lines[cursor.at] ?? "").slice("  - ref: ".length);
    const hashLine = cursor.lines[cursor.at + 1] ?? "";
    if (!isSourceRef(ref) || !hashLine.startsWith("    sha256: ")) return refuse("field_invalid", "sources");
    const sha256 = hashLine.slice("    sha256: ".length);
    if (!isSha256(sha256)) return refuse("field_invalid", "sources");
    sources.push({ ref, sha256 });
    cursor.at += 2;
  }
  return sources.length === 0 ? refuse("field_invalid", "sources") : { ok: true, value: sources };
}

/** Parses one schema-1 episode document. */
export function parseEpisode(content: string): EpisodeParse {
  const newline: Newline | null = content.startsWith("---\r\n") ? "\r\n" : content.startsWith("---\n") ? "\n" : null;
  if (newline === null) return refuse("front_matter_missing");
  const close = content.indexOf(`${newline}---${newline}`, 3);
  if (close < 0) return refuse("front_matter_unterminated");
  const head = content.slice(3 + newline.length, close);
  const lines = head === "" ? [] : head.split(newline);
  if (lines.some((l) => l.includes("\r") || l.includes("\n"))) return refuse("newline_mixed");
  const body = content.slice(close + 2 * newline.length + 3);
  const cursor: Cursor = { lines, at: 0 };
  const schema = take(cursor, "schema");
  if (!schema.ok) return schema;
  if (schema.value !== String(EPISODE_SCHEMA)) return refuse(/^[0-9]+$/.test(schema.value) ? "schema_unsupported" : "field_invalid", "schema");
  const id = take(cursor, "id");
  if (!id.ok) return id;
  if (!ID_PATTERN.test(id.value)) return refuse("field_invalid", "id");
  const created = take(cursor, "created");
  if (!created.ok) return created;
  if (!isEpisodeTime(created.value)) return refuse("field_invalid", "created");
  const updated = take(cursor, "updated");
  if (!updated.ok) return updated;
  if (!isEpisodeTime(updated.value) || Date.parse(updated.value) < Date.parse(created.value)) return refuse("field_invalid", "updated");
  const revision = take(cursor, "revision");
  if (!revision.ok) return revision;
  if (!REVISION.test(revision.value)) return refuse("field_invalid", "revision");
  const tier = take(cursor, "tier");
  if (!tier.ok) return tier;
  if (tier.value !== "episode" && tier.value !== "promoted") return refuse("field_invalid", "tier");
  const state = take(cursor, "state");
  if (!state.ok) return state;
  if (state.value !== "active" && state.value !== "superseded" && state.value !== "forgotten") return refuse("field_invalid", "state");
  let supersededBy: string | null = null;
  if (state.value === "superseded") {
    const by = take(cursor, "supersededBy");
    if (!by.ok) return by;
    if (!ID_PATTERN.test(by.value) || by.value === id.value) return refuse("field_invalid", "supersededBy");
    supersededBy = by.value;
  }
  const tagsKey = take(cursor, "tags");
  if (!tagsKey.ok) return tagsKey;
  const tags = items(cursor, "  - ");
  if (tagsKey.value !== "" || tags.length === 0 || !tags.every((t) => TAG_PATTERN.test(t)) || new Set(tags).size !== tags.length || originOf(tags) === null) {
    return refuse("field_invalid", "tags");
  }
  const sourcesKey = take(cursor, "sources");
  if (!sourcesKey.ok) return sourcesKey;
  const sources = parseSources(cursor, sourcesKey.value);
  if (!sources.ok) return sources;
  if (cursor.at < lines.length) {
    const lineKey = (lines[cursor.at] ?? "").split(":")[0] ?? "";
    return EPISODE_FIELDS.includes(lineKey as EpisodeField) ? refuse("field_unexpected", lineKey as EpisodeField) : refuse("field_unexpected");
  }
  return {
    ok: true,
    value: {
      schema: 1, id: id.value, created: created.value, updated: updated.value, revision: Number(revision.value),
      tier: tier.value, state: state.value, supersededBy, tags, sources: sources.value, body, newline,
    },
  };
}

/** Serializes an episode: the canonical front matter in the episode's newline, then the body verbatim. */
export function serializeEpisode(episode: Episode): string {
  const lines = [
    "---",
    `schema: ${EPISODE_SCHEMA}`,
    `id: ${episode.id}`,
    `created: ${episode.created}`,
    `updated: ${episode.updated}`,
    `revision: ${episode.revision}`,
    `tier: ${episode.tier}`,
    `state: ${episode.state}`,
    ...(episode.state === "superseded" ? [`supersededBy: ${episode.supersededBy ?? ""}`] : []),
    "tags:",
    ...episode.tags.map((tag) => `  - ${tag}`),
    ...(episode.sources.length === 0 ? ["sources: []"] : ["sources:", ...episode.sources.flatMap((s) => [`  - ref: ${s.ref}`, `    sha256: ${s.sha256}`])]),
    "---",
  ];
  return `${lines.join(episode.newline)}${episode.newline}${episode.body}`;
}

/**
 * Serializes `episode` and parses the result back, so a write can never
 * produce a document the reader refuses (a field out of its grammar).
 */
export function writeEpisode(episode: Episode): { ok: true; value: Episode; content: string } | { ok: false; error: EpisodeParseError } {
  const content = serializeEpisode(episode);
  const parsed = parseEpisode(content);
  return parsed.ok ? { ok: true, value: parsed.value, content } : parsed;
}
