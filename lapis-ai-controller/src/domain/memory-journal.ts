// What a turn's preparation metadata keeps about recalled memory: counts,
// the budget applied and the ids that reached the agent, in the owner
// journal (scalar metadata only, so it survives metadata-only retention and
// never holds memory text). Written inside the dispatch-boundary transaction:
// the rows exist exactly when the rendered context was sent.
import type { MemoryProfileName } from "./contract/memory.ts";
import type { TURN_MEMORY } from "./contract/shapes.ts";
import type { Infer } from "./contract/schema.ts";
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

/** The journal kinds `readRecall` reads (a read may fetch only these). */
export const RECALL_KINDS: readonly ["memory_recalled", "memory_rendered"] = ["memory_recalled", "memory_rendered"];

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

/** What recall gave a turn, as `turns.get` shows it to the owner. */
export type TurnMemory = Infer<typeof TURN_MEMORY>;

const count = (v: unknown): number => (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : 0);

/**
 * Reads a turn's recall back from its journal rows: the last `memory_recalled`
 * row and the `memory_rendered` rows after it, in rank order. Null when the
 * turn recalled nothing (no memory endpoint at preparation).
 */
export function readRecall(rows: readonly { type: string; data: Record<string, unknown> }[]): TurnMemory | null {
  let at = -1;
  rows.forEach((r, i) => { if (r.type === "memory_recalled") at = i; });
  const head = rows[at];
  if (head === undefined) return null;
  const d = head.data;
  const rendered = rows.slice(at + 1).filter((r) => r.type === "memory_rendered")
    .sort((a, b) => count(a.data.rank) - count(b.data.rank))
    .map((r) => ({ memoryId: String(r.data.memoryId), origin: r.data.origin === "recall" ? "recall" as const : "ingest" as const, truncated: r.data.truncated === true }));
  return {
    endpointId: String(d.endpointId), code: (typeof d.code === "string" ? d.code : null) as TurnMemory["code"], profile: d.profile === "group" ? "group" : "vault",
    budgetTokens: count(d.budgetTokens), usedTokens: count(d.usedTokens), offered: count(d.offered), invalid: count(d.invalid),
    rejected: count(d.rejected), skipped: count(d.skipped), rendered,
  };
}
