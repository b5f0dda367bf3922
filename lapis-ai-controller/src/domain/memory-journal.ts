// What a turn's preparation metadata keeps about recalled memory: counts,
// the budget applied and the ids that reached the agent, in the owner
// journal (scalar metadata only, so it survives metadata-only retention and
// never holds memory text). Written inside the dispatch-boundary transaction:
// the rows exist exactly when the rendered context was sent.
import type { MemoryProfileName } from "./contract/memory.ts";
import type { ErrorCode } from "./errors.ts";
import type { RenderedMemory } from "./memory-budget.ts";

/** The recall outcome of one turn. */
export type MemoryRecallRecord = {
  readonly endpointId: string;
  /** Null when the endpoint answered; else why recall gave nothing (the turn still runs). */
  readonly code: ErrorCode | null;
  readonly profile: MemoryProfileName;
  readonly budgetTokens: number;
  readonly usedTokens: number;
  /** Candidates the endpoint offered (within the asked limit). */
  readonly offered: number;
  readonly invalid: number;
  readonly rejected: number;
  readonly skipped: number;
  readonly rendered: readonly RenderedMemory[];
};

/** An owner-journal append (the engine store's). */
export type OwnerAppend = (entry: { threadId: string; turnId: string; type: string; visibility: "owner"; data: Record<string, string | number | boolean | null> }) => number;

/** Appends `memory_recalled` and one `memory_rendered` row per rendered id, in render order. */
export function recordRecall(append: OwnerAppend, threadId: string, turnId: string, r: MemoryRecallRecord): void {
  append({
    threadId, turnId, type: "memory_recalled", visibility: "owner",
    data: {
      endpointId: r.endpointId, code: r.code, profile: r.profile, budgetTokens: r.budgetTokens, usedTokens: r.usedTokens,
      offered: r.offered, invalid: r.invalid, rejected: r.rejected, skipped: r.skipped, rendered: r.rendered.length,
    },
  });
  for (const [rank, m] of r.rendered.entries()) {
    append({ threadId, turnId, type: "memory_rendered", visibility: "owner", data: { memoryId: m.id, rank, origin: m.origin, truncated: m.truncated } });
  }
}
