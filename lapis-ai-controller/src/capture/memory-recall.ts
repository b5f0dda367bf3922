// Recall at preparation (P-ARC-21, P-MEM-02): once a queued turn holds its
// workspace lease, in the same window as its context sources
// (`limits.turns.contextDeadlineMs`), the thread's memory endpoint (its owner's
// only) is asked for candidates with the server-built access envelope. Bad
// candidates are refused one by one, the rest are ranked, the thread's budget
// is enforced by the one render-time function, and the survivors become a
// context block ahead of the prompt. Recall is an addition to the turn, not a
// precondition: a late, failing, revoked or malformed endpoint gives no
// memory, a recorded code, and the turn runs on. A thread that binds memory
// endpoint ids (`binding.memoryEndpoints`) waits, within the same window, for
// one of them to be (re-)registered, so a turn prepared during an SDK's
// reconnect still recalls; at the deadline the record says
// `endpoint_disconnected` (recall unavailable), never silently nothing.
import type { EndpointOwner, EndpointRegistration } from "../domain/endpoint-registration.ts";
import type { ErrorCode } from "../domain/errors.ts";
import type { ContextBlock } from "../domain/executor-port.ts";
import { enforceMemoryBudget, threadBudget, type MemoryLimits } from "../domain/memory-budget.ts";
import { memoryEnvelope, rankCandidates, readCandidates, type EnvelopeThread } from "../domain/memory-candidates.ts";
import type { MemoryRecallRecord } from "../domain/memory-journal.ts";
import { CONTEXT_LIMIT_CAPS, CONTEXT_LIMIT_DEFAULTS, type PreparationPort, type PreparationRequest } from "../domain/turn-preparation.ts";
import type { RegistryRef } from "./capture-port.ts";
import { withDeadline } from "./context-port.ts";

/** What recall adds to a turn: a context block (or none) and the record of what was rendered. */
export type Recalled = { readonly block: ContextBlock | null; readonly record: MemoryRecallRecord };

/** Asks for and renders one turn's memory; null when the thread has no memory endpoint. */
export type MemoryRecall = (request: PreparationRequest, deadlineAt: number) => Promise<Recalled | null>;

const PASSED_THROUGH: readonly ErrorCode[] = ["endpoint_timeout", "endpoint_revoked", "endpoint_disconnected", "endpoint_not_found"];

/** The stored thread as recall reads it: the envelope facts and the memory endpoint ids it binds (none: any registered one). */
export type RecallThread = EnvelopeThread & { readonly memoryEndpoints?: readonly string[] };

const emptyRecord = (endpointId: string, code: ErrorCode | null, budget: ReturnType<typeof threadBudget>, counts: { offered?: number; invalid?: number; rejected?: number } = {}): Recalled => ({
  block: null,
  record: { endpointId, code, profile: budget.profile, budgetTokens: budget.budgetTokens, usedTokens: 0, offered: counts.offered ?? 0, invalid: counts.invalid ?? 0, rejected: counts.rejected ?? 0, skipped: 0, rendered: [] },
});

/** The endpoint recall asks: a bound one (live, or re-registered before the deadline) or, without bindings, the thread's registered one. */
async function servingEndpoint(reg: NonNullable<ReturnType<RegistryRef>>, owner: EndpointOwner, t: RecallThread, deadlineAt: number): Promise<EndpointRegistration | { missing: string; code: ErrorCode } | undefined> {
  const bound = t.memoryEndpoints ?? [];
  if (bound.length === 0) return reg.findMemory(owner, t.threadId);
  const usable = (e: EndpointRegistration) => e.kind === "memory" && (e.threadId === null || e.threadId === t.threadId);
  const live = bound.map((id) => reg.get(owner, id)).find((e) => e !== undefined);
  const endpoint = live ?? await reg.whenRegistered(owner, bound[0] as string, deadlineAt - Date.now());
  if (endpoint === undefined) return { missing: bound[0] as string, code: "endpoint_disconnected" };
  return usable(endpoint) ? endpoint : { missing: endpoint.endpointId, code: "endpoint_not_found" };
}

/** The recall function over the registry; `thread` reads the stored thread. */
export function memoryRecall(registry: RegistryRef, thread: (threadId: string) => RecallThread | null, limits: MemoryLimits): MemoryRecall {
  return async (request, deadlineAt) => {
    const t = thread(request.threadId);
    const reg = registry();
    if (t === null || reg === null) return null;
    const owner: EndpointOwner = { principal: t.principal, application: t.application };
    const endpoint = await servingEndpoint(reg, owner, t, deadlineAt);
    if (endpoint === undefined) return null;
    if ("missing" in endpoint) return emptyRecord(endpoint.missing, endpoint.code, threadBudget({}, limits));
    const budget = threadBudget(endpoint.memory ?? {}, limits);
    const empty = (code: ErrorCode | null, counts: { offered?: number; invalid?: number; rejected?: number } = {}): Recalled => emptyRecord(endpoint.endpointId, code, budget, counts);
    const remaining = deadlineAt - Date.now();
    if (remaining <= 0) return empty("endpoint_timeout");
    const limit = Math.min(limits.memoryMaxCandidates, 64);
    const params = { threadId: t.threadId, access: memoryEnvelope(t), turnId: request.turnId, prompt: request.prompt, limit };
    const answer = await withDeadline(reg.invoke(owner, endpoint.endpointId, "memory.recall", params, remaining), remaining);
    if (!answer.ok) return empty(PASSED_THROUGH.includes(answer.error.code) ? answer.error.code : "memory_failed");
    const read = readCandidates(answer.value, limit);
    if (read === null) return empty("memory_invalid");
    const counts = { offered: read.candidates.length + read.invalid + read.rejected + read.duplicates, invalid: read.invalid + read.duplicates, rejected: read.rejected };
    const render = enforceMemoryBudget(rankCandidates(read.candidates), budget);
    return {
      block: render.text === null ? null : { source: `memory:${endpoint.endpointId}`, text: render.text },
      record: { ...empty(null, counts).record, usedTokens: render.usedTokens, skipped: render.skipped.length, rendered: render.rendered },
    };
  };
}

/**
 * The preparation port with recall beside the application's context sources:
 * both run at once under one deadline. A context failure fails the turn as
 * before; the memory block follows the context blocks, ahead of the prompt.
 */
export function withMemoryRecall(context: PreparationPort, recall: MemoryRecall, deadlineMs: number | undefined): PreparationPort {
  const ms = Math.min(deadlineMs ?? CONTEXT_LIMIT_DEFAULTS.contextDeadlineMs, CONTEXT_LIMIT_CAPS.contextDeadlineMs);
  return async (request) => {
    const deadlineAt = Date.now() + ms;
    const [prepared, recalled] = await Promise.all([context(request), recall(request, deadlineAt)]);
    if (!prepared.ok || recalled === null) return prepared;
    return { ok: true, context: recalled.block === null ? prepared.context : [...prepared.context, recalled.block], memory: recalled.record };
  };
}
