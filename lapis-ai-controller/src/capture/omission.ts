// Omission records: what capture writes instead of an entry whose identity
// (message, tool, interaction, checkpoint, parent/child reference) scanning
// changed, or whose payload cannot be scanned within the bounded buffer. The
// omission keeps no identity and no payload, so no misleading association
// survives (P-ARC-08, P-CAP-09). Derived candidates carrying a reserved marker
// are rejected, never promoted (P-MEM-12).
import { OMISSION_PREFIX, REDACTION_PREFIX } from "./secret-detectors.ts";

/** Keys whose values are identities: never retained altered. */
export const IDENTITY_KEYS: ReadonlySet<string> = new Set([
  "messageId", "toolCallId", "interactionId", "nativeRequestId", "checkpointId", "parentId", "childId", "turnId", "threadId", "commandId", "attemptOf",
]);

/** Why an entry was omitted. */
export type OmissionReason = "identity_redacted" | "payload_too_large";

/** The journal kind of an omission record. */
export const OMISSION_KIND = "omission";

/** The omission that replaces an entry of kind `omittedKind`. */
export function omissionEntry(omittedKind: string, reason: OmissionReason): { type: string; data: Record<string, unknown> } {
  return { type: OMISSION_KIND, data: { omittedKind, reason, marker: `${OMISSION_PREFIX}${reason}]` } };
}

/** True when the text carries a reserved redaction or omission marker. */
export function hasReservedMarker(text: string): boolean {
  return text.includes(REDACTION_PREFIX) || text.includes(OMISSION_PREFIX);
}

/** Rejects a derived (memory) candidate that carries a marker (P-MEM-12). */
export function checkDerivedCandidate(text: string): { ok: true } | { ok: false; code: "candidate_rejected" } {
  return hasReservedMarker(text) ? { ok: false, code: "candidate_rejected" } : { ok: true };
}
