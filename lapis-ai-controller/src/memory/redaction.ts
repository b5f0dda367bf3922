// Redaction at the memory boundary. Every document is scanned through the
// injected redaction port before it is indexed or durably written, and every
// read is scanned before a candidate is derived from it. Memory never stores
// redacted text: content the scanner would change is refused as
// `candidate_rejected`, and so is content that already carries a reserved
// marker, since a marker is not a fact (`[redacted:…]` must never come back
// as a memory). A failed scanner fails closed.
import { RECALLED_MEMORY_TAG } from "../domain/memory-candidates.ts";
import type { EntryRedactor } from "../domain/redaction-port.ts";
import { memoryErr, memoryOk, type MemoryCandidate, type MemoryResult } from "./ports.ts";

/** The reserved marker prefixes the redactor writes (the same strings capture uses). */
export const REDACTED_MARKER = "[redacted:";
export const OMITTED_MARKER = "[omitted:";

/** The journal-style kind the memory library scans its documents as. */
export const MEMORY_SCAN_KIND = "memory_document";

/** True when `text` carries a reserved redaction or omission marker. */
export function hasReservedMarker(text: string): boolean {
  return text.includes(REDACTED_MARKER) || text.includes(OMITTED_MARKER);
}

/**
 * True when `text` carries the tag the service renders recalled memory in
 * (`<recalled-memory …>` or its closing tag, in any case): such text came out of recall
 * and is never stored again as a new memory.
 */
export function carriesRecalledTag(text: string): boolean {
  // In any case: a model reads `<RECALLED-MEMORY` as the same tag.
  const lower = text.toLowerCase();
  return lower.includes(`<${RECALLED_MEMORY_TAG}`) || lower.includes(`</${RECALLED_MEMORY_TAG}`);
}

/** Refuses a derived candidate text that carries a reserved marker (`candidate_rejected`). */
export function checkCandidateText(text: string): MemoryResult<void> {
  return hasReservedMarker(text) ? memoryErr("candidate_rejected") : memoryOk(undefined);
}

/**
 * Scans `texts` (a document, or the strings of a DTO) through the redactor.
 * Ok only when nothing would change and no marker is present; a scanner
 * failure is `scanner_unavailable` and nothing may be written or indexed.
 */
export function scanMemoryTexts(redactor: EntryRedactor, texts: readonly string[]): MemoryResult<void> {
  for (const text of texts) {
    const marked = checkCandidateText(text);
    if (!marked.ok) return marked;
  }
  const decision = redactor.prepare({ type: MEMORY_SCAN_KIND, data: { texts: [...texts] } });
  if (!decision.ok) return memoryErr("scanner_unavailable");
  if (decision.changed || decision.type !== MEMORY_SCAN_KIND) return memoryErr("candidate_rejected");
  return memoryOk(undefined);
}

/** The candidates that pass the marker check and the scan, and the ids refused. */
export type ScreenedCandidates = { readonly kept: MemoryCandidate[]; readonly rejected: string[] };

/**
 * Screens derived candidates one by one: a marked or scanner-changed
 * candidate is dropped and its id reported. A scanner failure stops the
 * screening (`scanner_unavailable`): no candidate passes an unscanned read.
 */
export function screenCandidates(redactor: EntryRedactor, candidates: readonly MemoryCandidate[]): MemoryResult<ScreenedCandidates> {
  const kept: MemoryCandidate[] = [];
  const rejected: string[] = [];
  for (const candidate of candidates) {
    const scanned = scanMemoryTexts(redactor, [candidate.text, ...candidate.sources.map((s) => s.ref)]);
    if (scanned.ok) kept.push(candidate);
    else if (scanned.error.code === "scanner_unavailable") return scanned;
    else rejected.push(candidate.id);
  }
  return memoryOk({ kept, rejected });
}
