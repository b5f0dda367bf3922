// Unicode-safe text helpers shared by normalisation and budgeting.

/** Marker appended to a body cut at its character limit. */
export const TRUNCATION_MARKER = " [truncated]";

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** Length of `text` in Unicode code points (the unit of every character limit). */
export function countChars(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

/** Removes lone surrogates, control characters (except tab and newline) and carriage returns. */
export function cleanText(text: string): string {
  return text
    .toWellFormed()
    .replace(/\r\n?/g, "\n")
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "");
}

/** Returns the longest prefix of at most `max` code points that ends on a grapheme boundary. */
function prefixAtBoundary(text: string, max: number): string {
  let used = 0;
  let end = 0;
  for (const { segment, index } of segmenter.segment(text)) {
    const size = countChars(segment);
    if (used + size > max) break;
    used += size;
    end = index + segment.length;
  }
  return text.slice(0, end);
}

/** Caps `text` at `max` code points, cutting at a grapheme boundary and appending `marker`. */
export function truncateText(text: string, max: number, marker: string = TRUNCATION_MARKER): { text: string; truncated: boolean } {
  if (countChars(text) <= max) return { text, truncated: false };
  const markerSize = countChars(marker);
  if (max <= markerSize) return { text: prefixAtBoundary(text, max), truncated: true };
  return { text: prefixAtBoundary(text, max - markerSize).trimEnd() + marker, truncated: true };
}
