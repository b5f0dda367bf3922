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

/** A row's metadata as written from its stored text (the inverse of storedMetadata); the text is valid JSON (startup validation). */
export function readMetadata(kind: unknown, messageId: unknown, metadata: string): Record<string, unknown> {
  return shortChunkMetadata(kind, messageId, metadata) ? { messageId } : JSON.parse(metadata) as Record<string, unknown>;
}
