// Memory candidates as the service takes them from an application's memory
// endpoint: the access envelope it sends (built from the stored thread only,
// so no client-supplied identity can reach the endpoint: P-API-09,
// AIC-API-004c) and the strict reading of what comes back. A candidate
// outside the wire shape is refused `candidate_invalid`; one carrying a
// reserved redaction or omission marker, or the recalled-memory tag itself,
// is refused `candidate_rejected` (P-MEM-12/17), so redacted or re-recalled
// text never reaches the agent as a fact.
import { MEMORY_CANDIDATE, type MemoryCandidate, type MemoryEnvelope } from "./contract/memory.ts";
import { validate } from "./contract/validate.ts";

/** The tag recalled memory is rendered in; text carrying it came from recall and is never taken as a candidate again. */
export const RECALLED_MEMORY_TAG = "recalled-memory";

/** Reserved markers of the redaction and omission paths; a candidate holding one is refused. */
export const RESERVED_MARKERS: readonly string[] = ["[redacted:", "[omitted:", `<${RECALLED_MEMORY_TAG}`, `</${RECALLED_MEMORY_TAG}`];

/** The thread facts the envelope is built from (the stored thread, never the request). */
export type EnvelopeThread = {
  readonly threadId: string;
  readonly principal: string;
  readonly application: string;
  readonly workspaceId: string;
  readonly restricted: boolean;
};

/** The server-built access envelope of every memory call for a thread; nothing else is copied. */
export function memoryEnvelope(thread: EnvelopeThread): MemoryEnvelope {
  return { principal: thread.principal, application: thread.application, thread: thread.threadId, workspace: thread.workspaceId, restricted: thread.restricted };
}

/** Why one candidate was refused. */
export type CandidateRefusal = "candidate_invalid" | "candidate_rejected";

/** True when any text of the candidate carries a reserved marker, in any case (models read tags case-insensitively: `<RECALLED-MEMORY` counts). */
export function carriesReservedMarker(values: readonly string[]): boolean {
  return values.some((v) => {
    const lower = v.toLowerCase();
    return RESERVED_MARKERS.some((m) => lower.includes(m));
  });
}

/** Reads one candidate strictly; the refusal code otherwise. */
export function readCandidate(value: unknown): { ok: true; candidate: MemoryCandidate } | { ok: false; code: CandidateRefusal } {
  if (validate(MEMORY_CANDIDATE, value) !== null) return { ok: false, code: "candidate_invalid" };
  const c = value as MemoryCandidate;
  if (Number.isNaN(Date.parse(c.updatedAt))) return { ok: false, code: "candidate_invalid" };
  if (carriesReservedMarker([c.text, ...c.sources.map((s) => s.ref)])) return { ok: false, code: "candidate_rejected" };
  return { ok: true, candidate: { id: c.id, text: c.text, score: c.score, updatedAt: c.updatedAt, sources: c.sources.map((s) => ({ ref: s.ref, sha256: s.sha256 })), origin: c.origin } };
}

/** The candidates of an answer, and a count of each refusal; `null` when the answer itself is out of shape. */
export type ReadCandidates = { readonly candidates: readonly MemoryCandidate[]; readonly invalid: number; readonly rejected: number; readonly duplicates: number };

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Reads a `{candidates: [...]}` answer (only the first `max` items are looked at: the endpoint was asked for that many); later duplicates of an id are dropped. */
export function readCandidates(answer: unknown, max: number): ReadCandidates | null {
  if (!isRecord(answer) || Object.keys(answer).some((k) => k !== "candidates") || !Array.isArray(answer.candidates)) return null;
  const out: MemoryCandidate[] = [];
  const seen = new Set<string>();
  let invalid = 0;
  let rejected = 0;
  let duplicates = 0;
  for (const item of answer.candidates.slice(0, max)) {
    const read = readCandidate(item);
    if (!read.ok) {
      if (read.code === "candidate_invalid") invalid += 1; else rejected += 1;
      continue;
    }
    if (seen.has(read.candidate.id)) { duplicates += 1; continue; }
    seen.add(read.candidate.id);
    out.push(read.candidate);
  }
  return { candidates: out, invalid, rejected, duplicates };
}

/** Ranking order: score high first, then the most recent revision, then id (deterministic). */
export function rankCandidates(candidates: readonly MemoryCandidate[]): MemoryCandidate[] {
  return [...candidates].sort((a, b) => b.score - a.score || Date.parse(b.updatedAt) - Date.parse(a.updatedAt) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
