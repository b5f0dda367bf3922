// Shape rules of journal rows shared by the writer and the startup validator:
// metadata holds short scalar facts only, so content cannot hide in it.

/** Event kinds are snake_case names. */
export const KIND_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;
/** Metadata keys are short identifiers. */
export const METADATA_KEY_PATTERN = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
/** Most metadata entries per row. */
export const METADATA_MAX_KEYS = 32;
/** Longest metadata string value: identities and codes, not content. */
export const METADATA_MAX_STRING = 256;

/** True when `kind` is a valid event kind. */
export function validKind(kind: unknown): kind is string {
  return typeof kind === "string" && KIND_PATTERN.test(kind);
}

/** True when `value` is a metadata object of short scalar facts. */
export function validMetadata(value: unknown): boolean {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const entries = Object.entries(value);
  if (entries.length > METADATA_MAX_KEYS) return false;
  return entries.every(([key, item]) => METADATA_KEY_PATTERN.test(key) && (
    item === null || typeof item === "boolean" || (typeof item === "number" && Number.isFinite(item)) ||
    (typeof item === "string" && item.length <= METADATA_MAX_STRING)
  ));
}

/** Receipt keys that would carry content; a receipt covers metadata and source identity only (P-STO-10). */
export const RECEIPT_CONTENT_KEYS = ["payload", "prompt", "text", "content", "input", "output", "message"];

/** True when `value` is a metadata-only receipt: short scalar facts and no content-named key. */
export function validReceipt(value: unknown): boolean {
  return validMetadata(value) && Object.keys(value as object).every((key) => !RECEIPT_CONTENT_KEYS.includes(key));
}

/**
 * A JSON text as JSON.stringify writes a flat object of short facts: no
 * whitespace, keys by METADATA_KEY_PATTERN (none of `forbidden`), values
 * strings of at most METADATA_MAX_STRING printable ASCII characters without
 * a quote or backslash (each decodes to itself), integers of at most 15
 * digits, booleans or null, at most METADATA_MAX_KEYS entries. A text it
 * matches parses to an object `validMetadata` accepts (duplicate keys only
 * make fewer entries), with no key of `forbidden`; a text it does not match
 * is judged by JSON.parse and the rule itself. Checking the text instead of
 * parsing it costs startup validation a fraction (a `turns.submit` receipt:
 * JSON.parse ~0.8 us).
 */
function flatFactsText(forbidden: readonly string[]): RegExp {
  const key = `"${forbidden.length > 0 ? `(?!(?:${forbidden.join("|")})")` : ""}[A-Za-z][A-Za-z0-9_]{0,63}"`;
  const value = `(?:"[ !#-\\[\\]-~]{0,${METADATA_MAX_STRING}}"|-?(?:0|[1-9][0-9]{0,14})|true|false|null)`;
  const entry = `${key}:${value}`;
  return new RegExp(`^\\{(?:${entry}(?:,${entry}){0,${METADATA_MAX_KEYS - 1}})?\\}$`);
}

/** Flat metadata as JSON.stringify writes it (flatFactsText): implies `validMetadata` of its parse. */
export const FLAT_METADATA_TEXT = flatFactsText([]);
/** A flat receipt as JSON.stringify writes it (flatFactsText): implies `validReceipt` of its parse. */
export const FLAT_RECEIPT_TEXT = flatFactsText(RECEIPT_CONTENT_KEYS);

/** The streamed chunk kinds, whose metadata is `{"messageId": <the row's message_id>}` (contract/events.ts). */
export const CHUNK_KINDS: readonly string[] = ["text", "reasoning"];

/**
 * The metadata text a chunk row stores (P-STO-40): `{}` when its metadata is
 * exactly `{"messageId": <its string message id>}`, which the message_id
 * column already holds (readMetadata gives it back); any other metadata is
 * stored whole. Undefined for the one shape `{}` could not tell apart: a
 * chunk with a string message id whose metadata is `{}` (serve never writes
 * one: a chunk's metadata always carries the id that sets the column).
 */
export function storedMetadata(kind: string, messageId: string | null, metadata: Readonly<Record<string, unknown>>): string | undefined {
  const keys = Object.keys(metadata);
  if (!CHUNK_KINDS.includes(kind) || messageId === null) return JSON.stringify(metadata);
  if (keys.length === 1 && keys[0] === "messageId" && metadata.messageId === messageId) return "{}";
  return keys.length === 0 ? undefined : JSON.stringify(metadata);
}

/** True when a row's stored metadata `{}` stands for `{"messageId": <messageId>}` (storedMetadata). */
export function shortChunkMetadata(kind: unknown, messageId: unknown, metadata: unknown): messageId is string {
  return metadata === "{}" && typeof messageId === "string" && typeof kind === "string" && CHUNK_KINDS.includes(kind);
}

/**
 * The metadata text of a chunk row whose payload column holds the chunk's
 * text itself (P-STO-42): the row's metadata is `{"messageId": <its
 * message_id>}` and its payload `{"text": <the column>}`. `[]` because no
 * valid file written before can hold it: validMetadata refuses an array, so
 * startup refused a row with this metadata until it meant this; and unlike a
 * new payload_state it needs no change to schema v1's CHECKs (the row stays
 * 'stored' with a non-NULL payload). A build from before refuses such a file
 * (storage_record_invalid), never misreads it.
 */
export const RAW_CHUNK_METADATA = "[]";

/** A chunk payload's text when the payload is exactly `{"text": <a well-formed string>}` (JSON.stringify of a lone surrogate escapes it; a bound string would not keep it), else undefined. */
function chunkText(payload: unknown): string | undefined {
  if (payload === null || typeof payload !== "object" || Array.isArray(payload)) return undefined;
  const keys = Object.keys(payload);
  const text = (payload as { text?: unknown }).text;
  return keys.length === 1 && keys[0] === "text" && typeof text === "string" && text.isWellFormed() ? text : undefined;
}

/**
 * The payload column of a stored chunk row kept as its raw text (P-STO-42):
 * the text when the row's stored metadata is the short form (`{}` beside a
 * string message id, storedMetadata) and its payload exactly `{"text":
 * <string>}`; undefined for any other row, whose payload is stored as
 * JSON.stringify writes it. With it, the row's metadata is RAW_CHUNK_METADATA.
 */
export function rawChunkText(kind: string, messageId: string | null, metadataText: string, payload: unknown): string | undefined {
  return shortChunkMetadata(kind, messageId, metadataText) ? chunkText(payload) : undefined;
}

/**
 * The payload and metadata columns a row stores, from its stored metadata
 * text (storedMetadata) and the payload it stores (undefined: none, as when
 * volatile or absent): a chunk's raw text beside RAW_CHUNK_METADATA where
 * rawChunkText gives one (P-STO-42), else the payload as JSON.stringify
 * writes it beside the metadata text. The writer's one form, which the
 * bench's seed uses too.
 */
export function storedColumns(kind: string, messageId: string | null, metadataText: string, payload: unknown): { readonly payload: string | null; readonly metadata: string } {
  if (payload === undefined) return { payload: null, metadata: metadataText };
  const raw = rawChunkText(kind, messageId, metadataText, payload);
  return raw === undefined ? { payload: JSON.stringify(payload), metadata: metadataText } : { payload: raw, metadata: RAW_CHUNK_METADATA };
}

/** True when a row's metadata says its payload column is the chunk's raw text (RAW_CHUNK_METADATA: a chunk kind beside a string message id). */
export function rawChunkRow(kind: unknown, messageId: unknown, metadata: unknown): messageId is string {
  return metadata === RAW_CHUNK_METADATA && typeof messageId === "string" && typeof kind === "string" && CHUNK_KINDS.includes(kind);
}

/** A row's metadata as written from its stored text (the inverse of storedMetadata); the text is valid JSON (startup validation). */
export function readMetadata(kind: unknown, messageId: unknown, metadata: string): Record<string, unknown> {
  return shortChunkMetadata(kind, messageId, metadata) || rawChunkRow(kind, messageId, metadata) ? { messageId } : JSON.parse(metadata) as Record<string, unknown>;
}

/** A stored payload as written from its column (a raw chunk text is `{"text": <it>}`, P-STO-42, else the JSON text parsed). */
export function readPayload(kind: unknown, messageId: unknown, metadata: unknown, payload: string): unknown {
  return rawChunkRow(kind, messageId, metadata) ? { text: payload } : JSON.parse(payload);
}

/** A stored payload's JSON text as the writer was given it: `JSON.stringify({text})` for a raw chunk text (P-STO-42), else the column. */
export function payloadJsonText(kind: unknown, messageId: unknown, metadata: unknown, payload: string): string {
  return rawChunkRow(kind, messageId, metadata) ? JSON.stringify({ text: payload }) : payload;
}
