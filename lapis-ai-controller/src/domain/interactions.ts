// Provider interactions (permission requests): the row and its journal entry
// are durable before the provider gets any answer (P-ARC-15); each settles
// exactly once (P-TRN-16/19); the host deadline is fixed at opening and never
// extended (P-TRN-13); expiry and cancellation are terminal (P-TRN-17).
import { automaticDecision, type PreparedApproval } from "./approval-policy.ts";
import type { PermissionAsk, PermissionDecision } from "./executor-port.ts";
import { refuse, ok, type Result } from "./turn-result.ts";
import type { InteractionRecord, InteractionState, TurnRecord, EngineStore } from "./turn-store-port.ts";

/** A client's answer to one interaction. */
export type InteractionAnswer = { optionId: string } | { outcome: "cancelled" };

/** Timer seam so deadlines are testable. */
export type Timers = { set(fn: () => void, ms: number): unknown; clear(handle: unknown): void };

/** Options of the broker. */
export type BrokerOptions = { deadlineMs: number; newId: () => string; timers: Timers; onPendingChange(turnId: string): void };

const ANSWERABLE = new Set(["dispatched", "running", "waiting"]);

/** Owns open interactions and their single settlement. */
export class InteractionBroker {
  #store: EngineStore;
  #opts: BrokerOptions;
  #waiters = new Map<string, { resolve: (d: PermissionDecision) => void; timer: unknown; threadId: string }>();

  constructor(store: EngineStore, opts: BrokerOptions) {
    this.#store = store;
    this.#opts = opts;
  }

  /** Opens an interaction; resolves with the one decision sent to the provider. */
  open(turn: TurnRecord, ask: PermissionAsk, approval: PreparedApproval): Promise<PermissionDecision> {
    const id = this.#opts.newId();
    const deadlineAt = this.#store.now() + this.#opts.deadlineMs;
    const rec: InteractionRecord = { id, turnId: turn.id, nativeRequestId: ask.nativeRequestId, category: ask.category, optionIds: ask.options.map((o) => o.optionId), state: "pending", optionId: null, decidedBy: null, deadlineAt };
    const auto = turn.config.restricted ? null : automaticDecision(approval, ask);
    const waitsForClient = !(auto && auto.outcome === "selected");
    this.#store.tx(() => {
      this.#store.insertInteraction(rec);
      this.#store.append({ threadId: turn.threadId, turnId: turn.id, type: "interaction_opened", visibility: "owner", data: { interactionId: id, nativeRequestId: ask.nativeRequestId, category: ask.category, toolCallId: ask.toolCallId, options: ask.options, deadlineAt } });
      // The application learns of a question from its event stream (no polling); the options are in turns.get.
      if (waitsForClient) this.#store.append({ threadId: turn.threadId, turnId: turn.id, type: "interaction_requested", visibility: "transcript", data: { interactionId: id, category: ask.category, deadlineAt } });
    });
    if (auto && auto.outcome === "selected") {
      this.#settle(rec, turn.threadId, "settled", auto.optionId, "policy");
      return Promise.resolve(auto);
    }
    return new Promise<PermissionDecision>((resolve) => {
      const timer = this.#opts.timers.set(() => this.expire(id), this.#opts.deadlineMs);
      this.#waiters.set(id, { resolve, timer, threadId: turn.threadId });
      this.#opts.onPendingChange(turn.id);
    });
  }

  /** A client's answer. Settles once; late, closed or foreign answers are refused. */
  respond(
    turnId: string, interactionId: string, answer: InteractionAnswer,
    record: (r: { interactionId: string; state: InteractionState }) => void = () => {},
  ): Result<{ interactionId: string; state: InteractionState }> {
    const rec = this.#store.getInteraction(interactionId);
    if (!rec || rec.turnId !== turnId) return refuse("not_found");
    if (rec.state === "expired") return refuse("interaction_expired");
    if (rec.state !== "pending") return refuse("interaction_closed");
    if (this.#store.now() >= rec.deadlineAt) {
      this.expire(interactionId);
      return refuse("interaction_expired");
    }
    const turn = this.#store.getTurn(turnId);
    if (!turn || !ANSWERABLE.has(turn.state)) return refuse("interaction_closed");
    if ("optionId" in answer && !rec.optionIds.includes(answer.optionId)) return refuse("invalid_params");
    const optionId = "optionId" in answer ? answer.optionId : null;
    const state = optionId === null ? "cancelled" : "settled";
    // The command receipt commits with the settlement, before the agent hears the answer.
    if (!this.#settle(rec, turn.threadId, state, optionId, "client", () => record({ interactionId, state }))) return refuse("interaction_closed");
    return ok({ interactionId, state });
  }

  /** The host deadline passed: terminal `expired`, the provider gets `cancelled`. */
  expire(interactionId: string): void {
    const rec = this.#store.getInteraction(interactionId);
    const w = this.#waiters.get(interactionId);
    if (!rec || !w) return;
    this.#settle(rec, w.threadId, "expired", null, "host");
  }

  /** Closes every pending interaction of a turn that ended or is cancelling. */
  closeTurn(turnId: string, to: "cancelled" | "closed"): void {
    for (const rec of this.#store.listInteractions(turnId)) {
      if (rec.state !== "pending") continue;
      const threadId = this.#waiters.get(rec.id)?.threadId ?? this.#store.getTurn(turnId)?.threadId ?? "";
      this.#settle(rec, threadId, to, null, "host");
    }
  }

  /** Stops every deadline timer (shutdown); pending rows stay for recovery to close. */
  close(): void {
    for (const w of this.#waiters.values()) this.#opts.timers.clear(w.timer);
    this.#waiters.clear();
  }

  /** Pending interactions of a turn. */
  pendingCount(turnId: string): number {
    return this.#store.listInteractions(turnId).filter((i) => i.state === "pending").length;
  }

  #settle(rec: InteractionRecord, threadId: string, to: Exclude<InteractionState, "pending">, optionId: string | null, decidedBy: "client" | "policy" | "host", inTx: () => void = () => {}): boolean {
    const done = this.#store.tx(() => {
      if (!this.#store.settleInteraction(rec.id, to, optionId, decidedBy)) return false;
      this.#store.append({ threadId, turnId: rec.turnId, type: "interaction_settled", visibility: "owner", data: { interactionId: rec.id, turnId: rec.turnId, nativeRequestId: rec.nativeRequestId, outcome: to, optionId, decidedBy } });
      inTx();
      return true;
    });
    if (!done) return false;
    const w = this.#waiters.get(rec.id);
    if (w) {
      this.#waiters.delete(rec.id);
      this.#opts.timers.clear(w.timer);
      w.resolve(optionId === null ? { outcome: "cancelled" } : { outcome: "selected", optionId });
      this.#opts.onPendingChange(rec.turnId);
    }
    return true;
  }
}
