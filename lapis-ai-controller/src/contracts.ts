// Public contracts for consumers: the transcript shape they persist (their
// own encrypted stores), its validator and its canonical hash. Our canonical
// form; no compatibility with another product's hash is claimed (P-SDK-17).
// Browser-safe: imports only domain/, hashes with WebCrypto.
import { canonicalJson } from "./domain/canonical-json.ts";
import { assertTranscript, type Transcript } from "./domain/transcript-rule.ts";

export { assertTranscript, TranscriptInvalid, type Transcript, type TranscriptEvent } from "./domain/transcript-rule.ts";

/** The canonical text a transcript hash covers (sorted keys, no whitespace). */
export function canonicalTranscript(transcript: Transcript): string {
  assertTranscript(transcript);
  return canonicalJson({ threadId: transcript.threadId, events: transcript.events });
}

/** SHA-256 hex of the canonical transcript, via WebCrypto (Node, Deno and browsers). */
export async function transcriptHash(transcript: Transcript): Promise<string> {
  const bytes = new TextEncoder().encode(canonicalTranscript(transcript));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}
