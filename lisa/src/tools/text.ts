// Text hygiene for everything a tool hands to the model: no control
// characters, one line-ending style, and truncation that never splits a
// surrogate pair.

// C0 controls except \t and \n, DEL, and C1 controls. \r is handled by
// line-ending normalisation first.
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g;
const ANY_CONTROL = /[\u0000-\u001F\u007F-\u009F]/;

/** Converts CRLF and lone CR line endings to LF. */
export function normaliseLineEndings(text: string): string {
  return text.replace(/\r\n?/g, "\n");
}

/** Removes control characters except newline and tab, and replaces lone surrogates. */
export function removeControlCharacters(text: string): string {
  return text.replace(CONTROL_CHARACTERS, "").toWellFormed();
}

/** Normalises line endings, then removes control characters (keeps \n and \t). */
export function cleanText(text: string): string {
  return removeControlCharacters(normaliseLineEndings(text));
}

/** True when the text contains any control character (including \t, \n, \r). */
export function hasControlCharacters(text: string): boolean {
  return ANY_CONTROL.test(text);
}

/** Collapses every whitespace run to one space, removes controls and trims. */
export function collapseWhitespace(text: string): string {
  return removeControlCharacters(text.replace(/\s+/g, " ")).trim();
}

/** Number of Unicode code points in the text. */
export function codePointLength(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

/** A result of bounded truncation. */
export interface Truncated {
  readonly text: string;
  readonly truncated: boolean;
}

/** Largest prefix end <= limit that does not split a surrogate pair. */
function safeCut(text: string, limit: number): number {
  if (limit <= 0) return 0;
  if (limit >= text.length) return text.length;
  const previous = text.charCodeAt(limit - 1);
  return previous >= 0xd800 && previous <= 0xdbff ? limit - 1 : limit;
}

/**
 * Bounds `text` to at most `maxUnits` UTF-16 code units (so also at most
 * `maxUnits` code points), cutting on a code-point boundary and appending
 * `marker` when anything was removed (the marker counts against the bound).
 */
export function truncateText(text: string, maxUnits: number, marker = "\n[truncated]"): Truncated {
  if (text.length <= maxUnits) return { text, truncated: false };
  if (marker.length >= maxUnits) return { text: text.slice(0, safeCut(text, maxUnits)), truncated: true };
  return { text: text.slice(0, safeCut(text, maxUnits - marker.length)) + marker, truncated: true };
}

/** Whitespace-collapsed, control-free text bounded to `maxUnits`, or null when empty. */
export function boundedLabel(text: string | null | undefined, maxUnits: number): string | null {
  if (text === null || text === undefined) return null;
  const label = truncateText(collapseWhitespace(text), maxUnits, "…").text;
  return label.length === 0 ? null : label;
}
