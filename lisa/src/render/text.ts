// Escaping and Unicode-safe truncation used by every part of the renderer.

const HTML_ESCAPES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

/** Removes lone surrogates, NUL and other control characters except tab and newline; normalises line ends. */
export function cleanText(text: string): string {
  return text
    .toWellFormed()
    .replace(/\r\n?/g, "\n")
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "");
}

/** Length in Unicode code points. */
export function countChars(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** Caps `text` at `max` code points on a grapheme boundary, appending `marker` when cut. */
export function truncate(text: string, max: number, marker: string): string {
  if (countChars(text) <= max) return text;
  const room = Math.max(0, max - countChars(marker));
  let used = 0;
  let end = 0;
  for (const { segment, index } of segmenter.segment(text)) {
    const size = countChars(segment);
    if (used + size > room) break;
    used += size;
    end = index + segment.length;
  }
  return text.slice(0, end).trimEnd() + (countChars(marker) <= max ? marker : "");
}

/** Collapses all whitespace runs (newlines included) to single spaces. */
export function singleLine(text: string): string {
  return cleanText(text).replace(/\s+/g, " ").trim();
}
