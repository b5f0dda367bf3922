// Where streamed text may be cut: the longest prefix of the unreleased text
// that no detector can still match across the next chunk. A match that could
// still grow past the end starts inside the detector's window, consists of its
// alphabet only, and begins with one of its literal leads (or the text left is
// a prefix of a lead). A complete match that ends before the end is final;
// the cut never falls inside a match.
import type { DetectorWindow } from "./stream-window.ts";

/** A match found in the unreleased text (offsets into it). */
export type HeldSpan = { readonly start: number; readonly end: number };

function compatible(text: string, q: number, leads: readonly string[]): boolean {
  const rest = text.length - q;
  return leads.some((lead) => (rest >= lead.length ? text.startsWith(lead, q) : lead.startsWith(text.slice(q))));
}

/** The release point in `text` (0..length): everything before it is final; `spans` are the complete matches found now. */
export function releasePoint(text: string, spans: readonly HeldSpan[], windows: readonly DetectorWindow[]): number {
  const end = text.length;
  // Positions inside a match that is complete (ends before the last character) cannot start a new one.
  const settled = (q: number) => spans.some((s) => s.start <= q && q < s.end && s.end < end);
  let r = end;
  for (const w of windows) {
    let from = Number.isFinite(w.max) ? Math.max(0, end - w.max) : 0;
    if (w.alphabet !== "any") {
      const alphabet = w.alphabet;
      let p = end;
      while (p > from && alphabet.has(text[p - 1] as string)) p--;
      from = p;
    }
    for (let q = from; q < r; q++) {
      if (compatible(text, q, w.leads) && !settled(q)) { r = q; break; }
    }
  }
  // Never cut through a match: move the cut to the start of any span that crosses it.
  for (let moved = true; moved;) {
    moved = false;
    for (const s of spans) if (s.start < r && s.end > r) { r = s.start; moved = true; }
  }
  return r;
}
