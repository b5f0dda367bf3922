// The redaction port (the role agent-redaction would fill; plan section 3).
// Durable writes pass their entry through it synchronously; it answers the
// entry to write (redacted, or an omission record when scanning changed an
// identity) or a failure code, and the write then fails closed.

/** A journal entry's kind and data as the engine would write them. */
export type RedactableEntry = { readonly type: string; readonly data: Readonly<Record<string, unknown>> };

/** What to write instead, or why nothing may be written. */
export type RedactionDecision =
  | { ok: true; type: string; data: Record<string, unknown>; changed: boolean }
  | { ok: false; code: "scanner_unavailable" };

/** Prepares durable writes; implemented by capture/, called by persistence. */
export interface EntryRedactor {
  prepare(entry: RedactableEntry): RedactionDecision;
  /**
   * Asks about strings a transaction is about to write in one scan, so each
   * entry's own `prepare` finds them already known clean; it decides nothing
   * (a failure or a match leaves them to `prepare`, which redacts or fails closed).
   */
  prescan?(texts: readonly string[]): void;
  /** Like `prescan`, but posts the scan and returns at once; the next preparation takes its answer first (P-PRF-13). */
  prefetch?(texts: readonly string[]): void;
}

/** One detector match in a scanned text (UTF-16 offsets). */
export type TextSpan = { readonly start: number; readonly end: number; readonly detector: string };

/** Text scanning for streamed event preparation; `null` when the scanner failed, "overflow" past its buffer. */
export interface BlockRedactor {
  /** The matches in each text, in order, without overlaps. */
  scanSpans(texts: readonly string[]): TextSpan[][] | null | "overflow";
}
