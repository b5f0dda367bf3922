// The SDK side of a `memory` endpoint: the handlers an application gives
// `registerEndpoint({kind: "memory", memory})`, and how each `endpoint.invoke`
// memory operation reaches them. Every request carries the access envelope
// the service built; a handler should filter by it (partition first, then
// score) and never trust anything else it is told about identity.
import type { EvidenceLocation, MemoryCandidate, MemoryEnvelope, MemoryOperation, MemorySettings } from "./contract/memory.ts";

/** What every memory handler is told: the envelope and the thread. */
export interface MemoryRequest {
  readonly access: MemoryEnvelope;
  readonly threadId: string;
}

/** The handlers of a memory endpoint, with the thread's profile and budget. */
export interface MemoryHandlers extends MemorySettings {
  /** Candidates for a turn being prepared (`prompt` is the turn's input; at most `limit`). */
  readonly recall: (request: MemoryRequest & { readonly turnId: string; readonly prompt: string; readonly limit: number }) => readonly MemoryCandidate[] | Promise<readonly MemoryCandidate[]>;
  /** The agent's `memory_search`: candidates for a query. */
  readonly search?: (request: MemoryRequest & { readonly query: string; readonly limit: number }) => readonly MemoryCandidate[] | Promise<readonly MemoryCandidate[]>;
  /** The agent's `memory_read`, first step: the evidence location this envelope may read for `id`, or null to refuse. */
  readonly authorize?: (request: MemoryRequest & { readonly id: string }) => EvidenceLocation | null | Promise<EvidenceLocation | null>;
  /** The agent's `memory_read`, second step: the memory at the authorized location. */
  readonly read?: (request: MemoryRequest & { readonly id: string; readonly location: EvidenceLocation }) => MemoryCandidate | Promise<MemoryCandidate>;
}

const OPERATIONS: readonly string[] = ["memory.recall", "memory.search", "memory.authorize", "memory.read"] satisfies readonly MemoryOperation[];

function base(params: Record<string, unknown>): MemoryRequest {
  return { access: params.access as MemoryEnvelope, threadId: String(params.threadId) };
}

/** The handler of a memory operation, answering the wire shape; undefined when it is not one or not provided. */
export function memoryOperationHandler(handlers: MemoryHandlers | undefined, operation: string): ((params: Record<string, unknown>) => Promise<unknown>) | undefined {
  if (handlers === undefined || !OPERATIONS.includes(operation)) return undefined;
  const { recall, search, authorize, read } = handlers;
  if (operation === "memory.recall") {
    return async (p) => ({ candidates: await recall({ ...base(p), turnId: String(p.turnId), prompt: String(p.prompt), limit: Number(p.limit) }) });
  }
  if (operation === "memory.search" && search !== undefined) {
    return async (p) => ({ candidates: await search({ ...base(p), query: String(p.query), limit: Number(p.limit) }) });
  }
  if (operation === "memory.authorize" && authorize !== undefined) {
    return async (p) => {
      const location = await authorize({ ...base(p), id: String(p.id) });
      return location === null ? null : { location };
    };
  }
  if (operation === "memory.read" && read !== undefined) {
    return async (p) => ({ candidate: await read({ ...base(p), id: String(p.id), location: p.location as EvidenceLocation }) });
  }
  return undefined;
}

/** The settings part sent with the registration (handlers stay in the application). */
export function memorySettingsOf(handlers: MemoryHandlers): MemorySettings {
  return { ...(handlers.profile === undefined ? {} : { profile: handlers.profile }), ...(handlers.budgetTokens === undefined ? {} : { budgetTokens: handlers.budgetTokens }) };
}
