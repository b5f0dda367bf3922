// Restart recovery and owner resolution. Provider session persistence never
// implies recoverable execution (P-ARC-13): a turn that crossed the dispatch
// boundary becomes submission_unknown (no proof the agent got it) or
// interrupted (it was running), and fences its workspace across restarts
// (P-TRN-04). Only an owner's explicit confirmation that external work stopped
// clears the fence (P-TRN-05/06/08); the original command is never retried.
import { isFencing, type TurnState } from "./turn-state.ts";
import { ok, refuse, type Result } from "./turn-result.ts";
import type { TurnRecord, EngineStore } from "./turn-store-port.ts";
import { dropLease, fenceWorkspace } from "./workspace-lease.ts";

/** Counts of what recovery did. */
export type RecoverySummary = { requeued: number; submissionUnknown: number; interrupted: number };

function journalState(store: EngineStore, t: TurnRecord, to: TurnState, code: string | null): void {
  store.append({ threadId: t.threadId, turnId: t.id, type: "turn_state", visibility: "owner", data: { state: to, code, recovered: true } });
}

/** Runs once at startup, before any external work starts. */
export function recoverTurns(store: EngineStore): RecoverySummary {
  return store.tx(() => {
    const sum: RecoverySummary = { requeued: 0, submissionUnknown: 0, interrupted: 0 };
    // Before the boundary nothing was sent: the turn may run again.
    for (const t of store.listTurns({ states: ["preparing"] })) {
      store.setTurnState(t.id, ["preparing"], "queued");
      dropLease(store, t.workspaceId, t.id, t.threadId);
      journalState(store, t, "queued", null);
      sum.requeued += 1;
    }
    for (const t of store.listTurns({ states: ["dispatched", "running", "waiting", "cancelling"] })) {
      const to: TurnState = t.state === "dispatched" ? "submission_unknown" : "interrupted";
      store.setTurnState(t.id, [t.state], to, { errorCode: "service_restarted" });
      journalState(store, t, to, "service_restarted");
      for (const i of store.listInteractions(t.id)) {
        if (i.state === "pending") store.settleInteraction(i.id, "closed", null, "host");
      }
      if (!store.getLease(t.workspaceId)) store.acquireLease(t.workspaceId, t.id);
      fenceWorkspace(store, t.workspaceId, t.id, t.threadId);
      if (to === "submission_unknown") sum.submissionUnknown += 1;
      else sum.interrupted += 1;
    }
    // Fences of lost outcomes persist; any other lease left behind is stale.
    for (const t of store.listTurns({ states: ["completed", "failed", "cancelled", "queued"] })) {
      const lease = store.getLease(t.workspaceId);
      if (lease && lease.turnId === t.id) dropLease(store, t.workspaceId, t.id, t.threadId);
    }
    return sum;
  });
}

/** The outcome an owner may record. */
export type Resolution = "failed" | "cancelled";

/** turns.resolve (and owner cancel of an inactive lost turn); `record` runs inside its transaction. */
export function resolveTurn(
  store: EngineStore, turnId: string, as: unknown, confirmExternalStopped: unknown, actor: string,
  record: (r: { turnId: string; state: Resolution }) => void = () => {},
): Result<{ turnId: string; state: Resolution }> {
  if (as !== "failed" && as !== "cancelled") return refuse("invalid_params");
  return store.tx(() => {
    const t = store.getTurn(turnId);
    if (!t) return refuse<{ turnId: string; state: Resolution }>("not_found");
    if (!isFencing(t.state)) return refuse<{ turnId: string; state: Resolution }>("turn_not_resolvable");
    if (confirmExternalStopped !== true) return refuse<{ turnId: string; state: Resolution }>("confirmation_required");
    store.setTurnState(t.id, [t.state], as, { errorCode: t.errorCode ?? "resolved_by_owner" });
    store.insertAudit({ actor, action: "turn_resolved", turnId: t.id, data: { from: t.state, as, confirmExternalStopped: true } });
    journalState(store, t, as, "resolved_by_owner");
    store.append({ threadId: t.threadId, turnId: t.id, type: "turn_resolved", visibility: "owner", data: { from: t.state, as, actor } });
    dropLease(store, t.workspaceId, t.id, t.threadId);
    // The command receipt commits with the resolution (turns.resolve, owner cancel).
    record({ turnId: t.id, state: as });
    return ok({ turnId: t.id, state: as });
  });
}
