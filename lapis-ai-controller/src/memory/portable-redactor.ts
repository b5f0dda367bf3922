// The browser-safe default redaction port of the memory library (P-MEM-14):
// the pinned detector table run inline, with no worker and no node: module,
// so an application without the controller's scanner still never stores a
// credential. It only decides: a scanned text with a match comes back
// changed (marked), which the memory operations refuse as
// `candidate_rejected`; nothing is ever written redacted. An application
// with an enforcement adapter of its own passes that instead.
import type { EntryRedactor, RedactableEntry, RedactionDecision } from "../domain/redaction-port.ts";
import { compileDetectors, MIN_SECRET_LENGTH, scanText, SECRET_DETECTORS, type SecretDetector } from "../domain/secret-detectors.ts";

/** Longest single text the portable redactor scans; a longer one fails closed (`scanner_unavailable`). */
export const PORTABLE_SCAN_MAX_CHARS = 1_048_576;

function rebuild(value: unknown, scan: (text: string) => string): unknown {
  if (typeof value === "string") return scan(value);
  if (Array.isArray(value)) return value.map((v) => rebuild(v, scan));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rebuild(v, scan)]));
  return value;
}

/** The default redaction port over the pinned detector table (or `table`, for tests of other tables). */
export function portableRedactor(table: readonly SecretDetector[] = SECRET_DETECTORS): EntryRedactor {
  const detectors = compileDetectors(table);
  return {
    prepare(entry: RedactableEntry): RedactionDecision {
      let changed = false;
      let tooLong = false;
      const data = rebuild(entry.data, (text) => {
        if (text.length < MIN_SECRET_LENGTH) return text;
        if (text.length > PORTABLE_SCAN_MAX_CHARS) { tooLong = true; return text; }
        const scanned = scanText(text, detectors);
        if (scanned.spans.length > 0) changed = true;
        return scanned.text;
      }) as Record<string, unknown>;
      if (tooLong) return { ok: false, code: "scanner_unavailable" };
      return { ok: true, type: entry.type, data, changed };
    },
  };
}
