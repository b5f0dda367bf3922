// The wire contract of a `memory` endpoint: what the service sends it through
// `endpoint.invoke` (always with a server-built access envelope) and the
// shapes it must answer. Answers are validated strictly against these
// schemas; a candidate outside them is refused, never repaired.
import type { Infer } from "./schema.ts";
import { bool, id, int, list, nullable, obj, oneOfValues, str } from "./schema.ts";

/** Where a memory came from: recalled (read back from a store) or ingested (written by the application). */
export const MEMORY_ORIGINS = ["recall", "ingest"] as const;

/** Budget rules of the two profiles: vault skips a candidate over budget and tries the next; group truncates. */
export const MEMORY_PROFILES = ["vault", "group"] as const;
/** A profile name. */
export type MemoryProfileName = (typeof MEMORY_PROFILES)[number];

/** The access envelope: built by the service from the thread's owner and configuration, never from a client's claim. */
export const MEMORY_ENVELOPE = obj({
  principal: id("the thread owner's principal (server-derived)"),
  application: id("the thread owner's application (server-derived)"),
  thread: id("the thread the memory serves"),
  workspace: id("the thread's workspace id"),
  restricted: bool("a restricted thread: rendered context only, no read tools"),
}, ["principal", "application", "thread", "workspace", "restricted"]);

/** The access envelope of one memory call. */
export type MemoryEnvelope = Infer<typeof MEMORY_ENVELOPE>;

/**
 * A memory's provenance id: like other ids, plus `/`, so a store's
 * `<partition>/<record id>` passes unchanged (the service never opens it as a path).
 */
export const MEMORY_ID_PATTERN = "^[A-Za-z0-9][A-Za-z0-9._:/-]{0,255}$";
/** A memory id schema. */
export function memoryId(description?: string): { readonly type: "string"; readonly pattern: string } {
  return { type: "string", pattern: MEMORY_ID_PATTERN, ...(description === undefined ? {} : { description }) };
}

const SHA256 = str({ pattern: "^[0-9a-f]{64}$", description: "lowercase hex sha256 of the source content" });

/** One source a memory rests on: an application-owned reference and the content hash it was derived from. */
export const MEMORY_SOURCE = obj({
  ref: str({ minLength: 1, maxLength: 1024, pattern: "^[^\\u0000-\\u001f\\u007f-\\u009f]*$", description: "the application's reference (a note path, a message id)" }),
  sha256: SHA256,
}, ["ref", "sha256"]);

/** One memory candidate as an endpoint answers it. */
export const MEMORY_CANDIDATE = obj({
  id: memoryId("the memory's provenance id (rendered with the text and recorded in the turn's metadata)"),
  text: str({ minLength: 1, maxLength: 100_000 }),
  score: { type: "number", minimum: 0, maximum: 1_000_000, description: "relevance, higher first" },
  updatedAt: str({ pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?(Z|[+-]\\d{2}:\\d{2})$", description: "RFC 3339 time of the last revision" }),
  sources: list(MEMORY_SOURCE, 64),
  origin: oneOfValues(MEMORY_ORIGINS),
}, ["id", "text", "score", "updatedAt", "sources", "origin"]);

/** One memory candidate. */
export type MemoryCandidate = Infer<typeof MEMORY_CANDIDATE>;

/** An evidence location the endpoint authorized for one read. */
export const EVIDENCE_LOCATION = MEMORY_SOURCE;
/** An authorized evidence location. */
export type EvidenceLocation = Infer<typeof EVIDENCE_LOCATION>;

/** The operations the service invokes on a memory endpoint, their params (beyond `endpointId`, `operation`, `threadId`) and answers. */
export const MEMORY_OPERATIONS = {
  "memory.recall": {
    summary: "candidates for the turn being prepared, asked once its workspace lease is held, under the context deadline",
    params: obj({ access: MEMORY_ENVELOPE, turnId: id(), prompt: str(), limit: int(1, 64) }, ["access", "turnId", "prompt", "limit"]),
    answer: obj({ candidates: list(MEMORY_CANDIDATE, 256) }, ["candidates"]),
  },
  "memory.search": {
    summary: "the agent's memory_search tool: candidates for a query",
    params: obj({ access: MEMORY_ENVELOPE, query: str(), limit: int(1, 64) }, ["access", "query", "limit"]),
    answer: obj({ candidates: list(MEMORY_CANDIDATE, 256) }, ["candidates"]),
  },
  "memory.authorize": {
    summary: "the agent's memory_read tool, first step: may this envelope read this memory? null refuses; else the evidence location",
    params: obj({ access: MEMORY_ENVELOPE, id: memoryId() }, ["access", "id"]),
    answer: nullable(obj({ location: EVIDENCE_LOCATION }, ["location"])),
  },
  "memory.read": {
    summary: "the agent's memory_read tool, second step: the memory at the authorized location (its sources include that location)",
    params: obj({ access: MEMORY_ENVELOPE, id: memoryId(), location: EVIDENCE_LOCATION }, ["access", "id", "location"]),
    answer: obj({ candidate: MEMORY_CANDIDATE }, ["candidate"]),
  },
} as const;

/** A memory operation name. */
export type MemoryOperation = keyof typeof MEMORY_OPERATIONS;
/** The memory operation names, in table order. */
export const MEMORY_OPERATION_NAMES = ["memory.recall", "memory.search", "memory.authorize", "memory.read"] as const satisfies readonly MemoryOperation[];

/** The per-thread memory settings an application registers with its endpoint (`endpoints.register`, kind memory). */
export const MEMORY_SETTINGS = obj({
  profile: oneOfValues(MEMORY_PROFILES, "vault: skip a candidate over budget and try the next; group: truncate the first one over budget and stop"),
  budgetTokens: int(1, 1_000_000, "the thread's memory budget in estimated tokens (4 characters each); capped by limits.turns.memoryMaxTokens"),
}, [], { description: "kind memory only" });

/** The per-thread memory settings. */
export type MemorySettings = Infer<typeof MEMORY_SETTINGS>;
