// The vault profile as the handlers of a controller `memory` endpoint: what
// an application passes to `registerEndpoint({ kind: "memory", memory })`.
// Which partitions a thread may read is decided from the server-built access
// envelope alone (never from anything the agent or a client says); a thread
// that maps to no partition recalls nothing. `memory_read` authorizes the
// current revision of the memory as its evidence location and reads exactly
// that revision back; a changed or forgotten memory fails closed.
import type { EvidenceLocation, MemoryEnvelope } from "../../domain/contract/memory.ts";
import type { MemoryHandlers } from "../../domain/memory-handlers.ts";
import type { MemoryCandidate, MemoryErrorCode } from "../ports.ts";
import type { VaultMemory } from "./vault.ts";

/** The most sources one candidate may carry on the wire. */
export const WIRE_MAX_SOURCES = 64;

export type VaultEndpointOptions = {
  /** The partitions a thread may read, decided from the envelope only; [] recalls nothing. */
  readonly partitions: (access: MemoryEnvelope) => readonly string[];
  /** The thread's memory budget in estimated tokens (the service caps it). */
  readonly budgetTokens?: number;
};

/** A handler failure: its message is the code only, never memory text. */
export class VaultEndpointFailure extends Error {
  readonly code: MemoryErrorCode;

  constructor(code: MemoryErrorCode) {
    super(code);
    this.name = "VaultEndpointFailure";
    this.code = code;
  }
}

function wire(candidate: MemoryCandidate): MemoryCandidate {
  return { ...candidate, sources: candidate.sources.slice(0, WIRE_MAX_SOURCES) };
}

/** The memory-endpoint handlers of a vault memory (profile vault: over-budget candidates are skipped). */
export function vaultMemoryHandlers(vault: VaultMemory, options: VaultEndpointOptions): MemoryHandlers {
  const find = async (access: MemoryEnvelope, query: string, limit: number): Promise<MemoryCandidate[]> => {
    const partitions = options.partitions(access);
    if (partitions.length === 0) return [];
    const found = await vault.candidates({ partitions, query, limit });
    if (!found.ok) throw new VaultEndpointFailure(found.error.code);
    return found.value.map(wire);
  };
  return {
    profile: "vault",
    ...(options.budgetTokens === undefined ? {} : { budgetTokens: options.budgetTokens }),
    recall: ({ access, prompt, limit }) => find(access, prompt, limit),
    search: ({ access, query, limit }) => find(access, query, limit),
    authorize: async ({ access, id }): Promise<EvidenceLocation | null> => {
      const read = await vault.read(id, options.partitions(access));
      return read.ok ? { ...read.value.location } : null;
    },
    read: async ({ access, id, location }) => {
      const read = await vault.read(id, options.partitions(access));
      if (!read.ok) throw new VaultEndpointFailure(read.error.code === "memory_record_not_found" ? "evidence_unavailable" : read.error.code);
      const current = read.value.location;
      if (current.ref !== location.ref || current.sha256 !== location.sha256) throw new VaultEndpointFailure("evidence_unavailable");
      const { candidate } = read.value;
      const others = candidate.sources.filter((s) => s.ref !== current.ref).slice(0, WIRE_MAX_SOURCES - 1);
      return { ...candidate, sources: [...others, { ...current }] };
    },
  };
}
