// The memory read tools (P-ARC-21, P-MEM-02/15/16): for a non-restricted
// thread whose owner registered a memory endpoint, the bridge lists
// `memory_search` and `memory_read` beside the application's tools. Each call
// goes to that endpoint with the server-built envelope of the stored thread.
// `memory_read` asks the endpoint to authorize the evidence first; an
// authorized location that carries a reserved marker, or that the redactor
// would change, fails closed `evidence_location_invalid` and is never passed
// on. Only the declared argument keys are read (an identity an agent adds is
// dropped). Arguments and locations stay in this execution path: nothing here
// writes to the journal or the log. Results are rendered by the same budget
// function as recall, so a tool answer is tagged and bounded the same way.
import type { Schema } from "../domain/contract/schema.ts";
import { EVIDENCE_LOCATION, MEMORY_ID_PATTERN, type EvidenceLocation, type MemoryOperation } from "../domain/contract/memory.ts";
import { validate } from "../domain/contract/validate.ts";
import type { EndpointRegistration } from "../domain/endpoint-registration.ts";
import { enforceMemoryBudget, threadBudget, type MemoryLimits } from "../domain/memory-budget.ts";
import { carriesReservedMarker, memoryEnvelope, rankCandidates, readCandidate, readCandidates, type EnvelopeThread } from "../domain/memory-candidates.ts";
import type { EntryRedactor } from "../domain/redaction-port.ts";
import type { HostedCall, HostedTool, RegistryRef, ToolOwnerBinding } from "./capture-port.ts";

/** The service-owned tool names; an application tool of the same name is hidden while memory tools are listed. */
export const MEMORY_TOOL_NAMES = ["memory_search", "memory_read"] as const;

/** A tool host as the bridge composes it (structurally the bridge's ToolHost). */
export type ComposableHost = {
  list(binding: ToolOwnerBinding): readonly HostedTool[];
  call(binding: ToolOwnerBinding, tool: string, args: unknown): Promise<HostedCall>;
};

function definitions(maxLimit: number): HostedTool[] {
  return [
    {
      name: "memory_search", mutating: false,
      description: "Searches this thread's memory (facts the application keeps for you). Answers tagged <recalled-memory> entries, best first, each with its id; pass an id to memory_read for the whole entry.",
      inputSchema: {
        type: "object", required: ["query"],
        properties: {
          query: { type: "string", minLength: 1, maxLength: 2000, description: "what to look for" },
          // The range is in the description too: some agents pass only descriptions to the model.
          limit: { type: "integer", minimum: 1, maximum: maxLimit, description: `how many entries at most, 1 to ${maxLimit} (default ${maxLimit})` },
        },
      } satisfies Schema,
    },
    {
      name: "memory_read", mutating: false,
      description: "Reads one memory entry by the id memory_search or the recalled context showed, after the application authorized the read.",
      inputSchema: {
        type: "object", required: ["id"],
        properties: { id: { type: "string", pattern: MEMORY_ID_PATTERN, description: "the memory id" } },
      } satisfies Schema,
    },
  ];
}

/** Everything a memory tool call runs against. */
type Target = { endpoint: EndpointRegistration; thread: EnvelopeThread };

/** The memory tools over the registry; `thread` reads the stored thread; `timeoutMs` bounds each endpoint call. */
export function memoryToolHost(registry: RegistryRef, thread: (threadId: string) => EnvelopeThread | null, redactor: EntryRedactor, limits: MemoryLimits, timeoutMs: number): ComposableHost {
  const maxLimit = Math.min(limits.memoryMaxCandidates, 64);
  const target = (binding: ToolOwnerBinding): Target | null => {
    const t = thread(binding.threadId);
    // The grant's owner must be the stored thread's owner; a restricted thread gets rendered context only.
    if (t === null || t.restricted || t.principal !== binding.principal || t.application !== binding.application) return null;
    const endpoint = registry()?.findMemory(binding, binding.threadId);
    return endpoint === undefined ? null : { endpoint, thread: t };
  };
  const invoke = async (tg: Target, operation: MemoryOperation, params: Record<string, unknown>) => {
    const reg = registry();
    if (reg === null) return { ok: false as const, code: "endpoint_disconnected" };
    const r = await reg.invoke(tg.thread, tg.endpoint.endpointId, operation, { threadId: tg.thread.threadId, access: memoryEnvelope(tg.thread), ...params }, timeoutMs);
    return r.ok ? { ok: true as const, value: r.value } : { ok: false as const, code: r.error.code };
  };
  const render = (tg: Target, ranked: Parameters<typeof enforceMemoryBudget>[0], profile?: "group") => {
    const budget = threadBudget(tg.endpoint.memory ?? {}, limits);
    return enforceMemoryBudget(ranked, profile === undefined ? budget : { ...budget, profile }).text ?? "no memory entries";
  };
  const search = async (tg: Target, args: { query: string; limit?: number }): Promise<HostedCall> => {
    // Without a limit the endpoint is asked for limits.turns.memoryMaxCandidates, as recall is; above it the schema refused the call.
    const limit = args.limit ?? maxLimit;
    const answer = await invoke(tg, "memory.search", { query: args.query, limit });
    if (!answer.ok) return answer;
    const read = readCandidates(answer.value, limit);
    return read === null ? { ok: false, code: "memory_invalid" } : { ok: true, value: render(tg, rankCandidates(read.candidates)) };
  };
  const locationUsable = (location: EvidenceLocation): HostedCall | null => {
    if (carriesReservedMarker([location.ref])) return { ok: false, code: "evidence_location_invalid" };
    const scanned = redactor.prepare({ type: "evidence_location", data: { ref: location.ref } });
    if (!scanned.ok) return { ok: false, code: scanned.code };
    return scanned.changed ? { ok: false, code: "evidence_location_invalid" } : null;
  };
  const read = async (tg: Target, args: { id: string }): Promise<HostedCall> => {
    // Evidence authorization first: without it nothing is read.
    const authorized = await invoke(tg, "memory.authorize", { id: args.id });
    if (!authorized.ok) return authorized;
    if (authorized.value === null) return { ok: false, code: "evidence_unauthorized" };
    const value = authorized.value as { location?: unknown } | undefined;
    if (value === undefined || typeof value !== "object" || Object.keys(value).length !== 1 || validate(EVIDENCE_LOCATION, value.location) !== null) return { ok: false, code: "memory_invalid" };
    const location = value.location as EvidenceLocation;
    const unusable = locationUsable(location);
    if (unusable !== null) return unusable;
    const answer = await invoke(tg, "memory.read", { id: args.id, location: { ref: location.ref, sha256: location.sha256 } });
    if (!answer.ok) return answer;
    const got = answer.value as { candidate?: unknown } | null;
    if (got === null || typeof got !== "object" || Object.keys(got).length !== 1) return { ok: false, code: "memory_invalid" };
    const candidate = readCandidate(got.candidate);
    if (!candidate.ok) return { ok: false, code: candidate.code };
    if (candidate.candidate.id !== args.id) return { ok: false, code: "memory_invalid" };
    // What is read must rest on the location that was authorized.
    if (!candidate.candidate.sources.some((s) => s.ref === location.ref && s.sha256 === location.sha256)) return { ok: false, code: "evidence_location_invalid" };
    return { ok: true, value: render(tg, [candidate.candidate], "group") };
  };
  return {
    list: (binding) => (target(binding) === null ? [] : definitions(maxLimit)),
    async call(binding, tool, args) {
      const tg = target(binding);
      if (tg === null) return { ok: false, code: "tool_not_found" };
      const listed = definitions(maxLimit).find((d) => d.name === tool);
      if (listed === undefined || validate(listed.inputSchema, args) !== null) return { ok: false, code: listed === undefined ? "tool_not_found" : "invalid_params" };
      // Only the declared keys are read: anything else an agent sends (a principal, a thread) is dropped here (P-API-09).
      const a = args as { query: string; limit?: number; id: string };
      return tool === "memory_search" ? search(tg, { query: a.query, ...(a.limit === undefined ? {} : { limit: a.limit }) }) : read(tg, { id: a.id });
    },
  };
}

/** The application's tools with the memory tools beside them; the memory tools own their names while they are listed. */
export function withMemoryTools(app: ComposableHost, memory: ComposableHost): ComposableHost {
  const owned = (binding: ToolOwnerBinding): boolean => memory.list(binding).length > 0;
  const reserved = (name: string): boolean => (MEMORY_TOOL_NAMES as readonly string[]).includes(name);
  return {
    list(binding) {
      const mine = memory.list(binding);
      return mine.length === 0 ? app.list(binding) : [...app.list(binding).filter((t) => !reserved(t.name)), ...mine];
    },
    call(binding, tool, args) {
      return reserved(tool) && owned(binding) ? memory.call(binding, tool, args) : app.call(binding, tool, args);
    },
  };
}
