// The pinned-secret-scanner adapter of the redaction port: every string of a
// durable entry is scanned in the worker (synchronously, bounded buffer);
// matches become `[redacted:<detector>]`; an altered identity or an
// unscannable payload becomes an omission; a scanner failure fails the write
// closed. Streamed event text is scanned over the unreleased tail of its
// block (capture/event-blocks.ts), so a secret split across stream chunks is
// still found (P-CAP-09/10, P-ARC-08).
import type { BlockRedactor, EntryRedactor, RedactableEntry, RedactionDecision } from "../domain/redaction-port.ts";
import { IDENTITY_KEYS, omissionEntry } from "./omission.ts";
import type { TextScanner } from "./scan-client.ts";
import { MIN_SECRET_LENGTH, redactionMarker, type RedactionSpan, type ScanResult } from "./secret-detectors.ts";

/**
 * Short strings the detectors found nothing in, remembered so that the one
 * message id every streamed chunk carries is scanned once, not once a chunk
 * (the detectors are pinned: a verdict never changes). Only clean verdicts are
 * kept, of strings up to CLEAN_MEMO_LENGTH; the set is cleared when full.
 */
const CLEAN_MEMO_LENGTH = 256;
const CLEAN_MEMO_ENTRIES = 1024;

type Found = { text: string; identity: boolean };

function collect(value: unknown, key: string | null, out: Found[]): void {
  if (typeof value === "string") {
    if (value.length >= MIN_SECRET_LENGTH) out.push({ text: value, identity: key !== null && IDENTITY_KEYS.has(key) });
  } else if (Array.isArray(value)) {
    for (const v of value) collect(v, null, out);
  } else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) collect(v, k, out);
  }
}

function rebuild(value: unknown, next: () => string): unknown {
  if (typeof value === "string") return value.length >= MIN_SECRET_LENGTH ? next() : value;
  if (Array.isArray(value)) return value.map((v) => rebuild(v, next));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = rebuild(v, next);
    return out;
  }
  return value;
}

/** Places each span's marker in the chunk where the span starts; covered text is dropped. */
export function mapSpansToChunks(chunks: readonly string[], spans: readonly RedactionSpan[]): string[] {
  const joined = chunks.join("");
  const out: string[] = [];
  let cs = 0;
  for (const chunk of chunks) {
    const ce = cs + chunk.length;
    let text = "";
    let pos = cs;
    for (const s of spans) {
      if (s.end <= cs || s.start >= ce) continue;
      if (s.start >= pos) text += joined.slice(pos, s.start);
      if (s.start >= cs) text += redactionMarker(s.detector);
      pos = Math.max(pos, Math.min(s.end, ce));
    }
    if (pos < ce) text += joined.slice(pos, ce);
    out.push(text);
    cs = ce;
  }
  return out;
}

/** The redactor over a scanner (the worker client in production). */
export class PinnedSecretRedactor implements EntryRedactor, BlockRedactor {
  readonly #scanner: TextScanner;
  readonly #clean = new Set<string>();

  constructor(scanner: TextScanner) {
    this.#scanner = scanner;
  }

  /** Redacts one durable entry, or replaces it with an omission, or fails closed. */
  prepare(entry: RedactableEntry): RedactionDecision {
    this.#settle();
    const found: Found[] = [];
    collect(entry.data, null, found);
    const unknown = found.filter((f) => !this.#clean.has(f.text)).map((f) => f.text);
    if (unknown.length === 0) return { ok: true, type: entry.type, data: { ...entry.data }, changed: false };
    const scanned = this.#scanner.scan(unknown);
    if (!scanned.ok) {
      if (scanned.code === "scanner_unavailable") return { ok: false, code: "scanner_unavailable" };
      return { ok: true, ...omissionEntry(entry.type, "payload_too_large"), changed: true };
    }
    const fresh = new Map<string, ScanResult>();
    unknown.forEach((text, i) => { const r = scanned.results[i]; if (r !== undefined) fresh.set(text, r); });
    // A remembered string is clean; any other without a result fails closed.
    const asked = new Set(unknown);
    const known = found.map((f) => fresh.get(f.text) ?? (asked.has(f.text) ? undefined : { text: f.text, spans: [] }));
    const results = known.filter((r): r is ScanResult => r !== undefined);
    if (results.length !== found.length) return { ok: false, code: "scanner_unavailable" };
    this.#remember(fresh);
    if (found.some((f, i) => f.identity && (results[i]?.spans.length ?? 0) > 0)) {
      return { ok: true, ...omissionEntry(entry.type, "identity_redacted"), changed: true };
    }
    if (results.every((r) => r.spans.length === 0)) return { ok: true, type: entry.type, data: { ...entry.data }, changed: false };
    let i = 0;
    const data = rebuild(entry.data, () => results[i++]?.text ?? "") as Record<string, unknown>;
    return { ok: true, type: entry.type, data, changed: true };
  }

  /** Scans the not yet known strings a receipt carries (its prompt, its command id) in one round trip, remembering the clean ones. */
  prescan(texts: readonly string[]): void {
    this.#settle();
    const ask = this.#unknown(texts);
    // One string is asked by its own entry's preparation: a scan here would only repeat it.
    if (ask.length < 2) return;
    this.#learn(ask, this.#scanner.scan(ask));
  }

  /**
   * Posts the strings a request will write (a submit's prompt, command id and
   * source reference) to the scanner and returns at once, so the worker scans
   * them while the request is checked; the next scan of this redactor, or an
   * entry's preparation, takes the answer first (P-PRF-13). Like `prescan` it
   * decides nothing: only clean verdicts are remembered.
   */
  prefetch(texts: readonly string[]): void {
    this.#settle();
    const ask = this.#unknown(texts);
    if (ask.length === 0 || this.#scanner.begin === undefined) return;
    const outcome = this.#scanner.begin(ask);
    this.#pending = () => this.#learn(ask, outcome());
  }

  /** A prefetch posted and not yet taken. */
  #pending: (() => void) | null = null;

  #settle(): void {
    const pending = this.#pending;
    this.#pending = null;
    pending?.();
  }

  /** The strings worth asking ahead: long enough for a detector, short enough to remember, not known clean. */
  #unknown(texts: readonly string[]): string[] {
    return [...new Set(texts.filter((t) => t.length >= MIN_SECRET_LENGTH && t.length <= CLEAN_MEMO_LENGTH && !this.#clean.has(t)))];
  }

  #learn(ask: readonly string[], scanned: ReturnType<TextScanner["scan"]>): void {
    if (!scanned.ok || scanned.results.length !== ask.length) return;
    const fresh = new Map<string, ScanResult>();
    ask.forEach((text, i) => { const r = scanned.results[i]; if (r !== undefined && r.text === text) fresh.set(text, r); });
    this.#remember(fresh);
  }

  #remember(fresh: ReadonlyMap<string, ScanResult>): void {
    for (const [text, r] of fresh) {
      if (r.spans.length > 0 || text.length > CLEAN_MEMO_LENGTH) continue;
      if (this.#clean.size >= CLEAN_MEMO_ENTRIES) this.#clean.clear();
      this.#clean.add(text);
    }
  }

  /** The matches in each text (streamed event preparation places the markers); a text too short for any match skips the worker. */
  scanSpans(texts: readonly string[]): RedactionSpan[][] | null | "overflow" {
    this.#settle();
    const long = texts.filter((t) => t.length >= MIN_SECRET_LENGTH);
    if (long.length === 0) return texts.map(() => []);
    const scanned = this.#scanner.scan(long);
    if (!scanned.ok) return scanned.code === "scan_overflow" ? "overflow" : null;
    let next = 0;
    return texts.map((t) => (t.length >= MIN_SECRET_LENGTH ? scanned.results[next++]?.spans ?? [] : []));
  }
}
