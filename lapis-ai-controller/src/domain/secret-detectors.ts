// The pinned credential-detector table ("pinned-secret-scanner", not
// agent-redaction, which is unpublished) and the pure matching over it. Data
// and plain functions only, so the capture worker, the browser-safe memory
// redactor and the SDK can all use the one table. A pattern scanner bounds
// what we claim; it is no proof of secrecy.

/** One detector: a stable id (it names the marker) and a JS regex source. */
export type SecretDetector = { readonly id: string; readonly pattern: string };

/** Version of the table below; bump it with any change. */
export const DETECTOR_TABLE_VERSION = "pinned-secret-scanner/1";

// Order matters only for overlaps: earlier detectors win at the same start.
// Boundaries stop a match inside a longer identifier-like word.
const B = "(?<![A-Za-z0-9_-])";

/** The pinned detector table. */
export const SECRET_DETECTORS: readonly SecretDetector[] = Object.freeze([
  { id: "private_key", pattern: "-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----[\\s\\S]{0,16384}?-----END [A-Z ]{0,40}PRIVATE KEY-----" },
  { id: "anthropic_api_key", pattern: `${B}sk-ant-[A-Za-z0-9_-]{20,400}` },
  { id: "openai_api_key", pattern: `${B}sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,400}` },
  { id: "stripe_secret_key", pattern: `${B}(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,200}` },
  { id: "aws_access_key_id", pattern: "(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])" },
  { id: "github_token", pattern: `${B}(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})` },
  { id: "gitlab_token", pattern: `${B}glpat-[A-Za-z0-9_-]{20,100}` },
  { id: "slack_token", pattern: `${B}xox[abposr]-[A-Za-z0-9-]{10,250}` },
  { id: "google_api_key", pattern: `${B}AIza[A-Za-z0-9_-]{35}` },
  { id: "jwt", pattern: `${B}eyJ[A-Za-z0-9_-]{8,2048}\\.eyJ[A-Za-z0-9_-]{8,4096}\\.[A-Za-z0-9_-]{8,2048}` },
].map((d) => Object.freeze(d)));

/**
 * Strings shorter than this cannot hold any detector's match; they skip the
 * worker. The shortest match is slack_token's `xoxb-` and ten characters (15);
 * `test/unit/capture/secret-min-length.test.ts` holds each detector's.
 */
export const MIN_SECRET_LENGTH = 15;

/** The reserved marker prefixes; derived memory candidates carrying them are rejected. */
export const REDACTION_PREFIX = "[redacted:";
export const OMISSION_PREFIX = "[omitted:";

/** The marker that replaces a match. */
export function redactionMarker(detectorId: string): string {
  return `${REDACTION_PREFIX}${detectorId}]`;
}

/** One redacted span in the original text. */
export type RedactionSpan = { start: number; end: number; detector: string };

/** The result of scanning one text. */
export type ScanResult = { text: string; spans: RedactionSpan[] };

/** Compiled detectors, built once per worker. */
export function compileDetectors(table: readonly SecretDetector[] = SECRET_DETECTORS): { id: string; re: RegExp }[] {
  return table.map((d) => ({ id: d.id, re: new RegExp(d.pattern, "g") }));
}

/** Finds every match, drops overlaps (earliest start, then table order), and replaces them with markers. */
export function scanText(text: string, detectors: readonly { id: string; re: RegExp }[]): ScanResult {
  const found: (RedactionSpan & { rank: number })[] = [];
  detectors.forEach((d, rank) => {
    d.re.lastIndex = 0;
    for (const m of text.matchAll(d.re)) found.push({ start: m.index, end: m.index + m[0].length, detector: d.id, rank });
  });
  if (found.length === 0) return { text, spans: [] };
  found.sort((a, b) => a.start - b.start || a.rank - b.rank);
  const spans: RedactionSpan[] = [];
  let out = "";
  let at = 0;
  for (const f of found) {
    if (f.start < at) continue;
    out += text.slice(at, f.start) + redactionMarker(f.detector);
    at = f.end;
    spans.push({ start: f.start, end: f.end, detector: f.detector });
  }
  return { text: out + text.slice(at), spans };
}
