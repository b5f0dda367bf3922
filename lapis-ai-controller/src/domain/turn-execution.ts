// The turn engine: one turn at a time per workspace, provider setup before the
// persisted dispatch boundary (P-TRN-03), cancellation that keeps the lease
// until the provider confirms or the confirmation deadline expires
// (P-TRN-01/02), and lost outcomes that fence the workspace (P-TRN-04).
import type { ExecutorEvent, Executor, PermissionAsk, PermissionDecision, PreparedSession, TurnOutcome, VcsIdentity } from "./executor-port.ts";
import { InteractionBroker, type Timers } from "./interactions.ts";
import { historyOf, HISTORY_EVENTS, seedChars, seedContext } from "./history-seed.ts";
import { recordContinuity } from "./session-continuity.ts";
import { captureEvent } from "./transcript-capture.ts";
import type { PreparationPort } from "./turn-preparation.ts";
import { recordRecall } from "./memory-journal.ts";
import { isFinal, type TurnState } from "./turn-state.ts";
import { ok, refuse, type Result } from "./turn-result.ts";
import type { TurnRecord, EngineStore } from "./turn-store-port.ts";
import { dropLease, fenceWorkspace, takeLease } from "./workspace-lease.ts";

/** Setup failures the turn keeps as they are; any other is `provider_setup_failed`. External MCP ones fail before launch (P-PRV-08/10/14). */
const SETUP_CODES_KEPT: readonly string[] = [
  "restricted_mode_unavailable", "endpoint_disconnected", "endpoint_not_found", "mcp_restricted", "mcp_unsupported", "mcp_descriptor_invalid",
  "mcp_env_reserved", "mcp_env_conflict", "mcp_env_unavailable", "mcp_secret_in_argv", "mcp_required_failed",
  "history_cut_failed",
];

/** Engine configuration; every limit is validated and capped by the caller. */
export type EngineOptions = {
  store: EngineStore;
  executor: Executor;
  /** Workspace id -> real root directory. */
  workspaces: ReadonlyMap<string, string>;
  cancelConfirmMs: number;
  interactionDeadlineMs: number;
  /** The longest seeded history (chars); a longer one fails the turn `history_too_large` before dispatch. */
  historySeedMaxChars: number;
  newId: () => string;
  timers: Timers;
  vcsIdentity: (providerId: string) => VcsIdentity | null;
  envGrants: (providerId: string) => Readonly<Record<string, string>>;
  /** Rechecks a continuation's prior outcome and evidence (P-TRN-26). */
  continuationReady: (turn: TurnRecord) => boolean;
  /** The prompt actually sent: new instructions plus verified evidence. */
  promptFor: (turn: TurnRecord) => string | null;
  /** Context and preparation endpoints, asked once the turn is eligible (issue 25 point 1); none when absent. */
  prepareTurn?: PreparationPort;
  /**
   * Runs when the provider's outcome is known, before the turn's end is
   * committed (so before any client sees it): the thread's consumer
   * transcript store takes the turn's entries. A failure turns a completed
   * outcome into `failed` with its code. It calls `beforeRead` (which commits
   * the queued events) only when a store will read them: without one, the
   * outcome's own commit takes them.
   */
  settleTurn?: (threadId: string, beforeRead: () => void) => Promise<{ readonly ok: true } | { readonly ok: false; readonly code: string }>;
};

const LIVE: readonly TurnState[] = ["dispatched", "running", "waiting"];
const ENDABLE: readonly TurnState[] = ["dispatched", "running", "waiting", "cancelling"];


/** The engine. */
export class TurnEngine {
  readonly broker: InteractionBroker;
  #o: EngineOptions;
  #live = new Map<string, { session: PreparedSession; cancelTimer: unknown; alive: boolean }>();
  #starting = new Set<string>();
  #closed = false;
  #idle: Array<() => void> = [];

  constructor(o: EngineOptions) {
    this.#o = o;
    this.broker = new InteractionBroker(o.store, {
      deadlineMs: o.interactionDeadlineMs,
      newId: o.newId,
      timers: o.timers,
      onPendingChange: (turnId) => this.#pendingChanged(turnId),
    });
  }

  /** Starts every queued turn whose workspace is free, oldest first. */
  schedule(): void {
    if (this.#closed) return;
    const queued = this.#o.store.listTurns({ states: ["queued"] });
    const seen = new Set<string>();
    for (const t of queued) {
      if (seen.has(t.workspaceId)) continue;
      seen.add(t.workspaceId);
      if (this.#starting.has(t.workspaceId) || this.#o.store.getLease(t.workspaceId)) continue;
      this.#start(t, false);
    }
    this.#notifyIdle();
  }

  /**
   * Inside the submit's transaction: a turn next in line in a free workspace
   * takes the lease and enters `preparing` in that same commit (one commit
   * fewer before dispatch) and starts once it is committed, never after a
   * rollback. Any other turn stays queued for `schedule`.
   */
  claim(turnId: string): void {
    const s = this.#o.store;
    const turn = s.getTurn(turnId);
    if (this.#closed || !turn || turn.state !== "queued" || this.#starting.has(turn.workspaceId) || s.getLease(turn.workspaceId)) return;
    if (s.listTurns({ states: ["queued"], workspaceId: turn.workspaceId }).some((t) => t.id !== turnId)) return;
    if (this.#enterPreparing(turn)) s.afterCommit(() => { if (!this.#closed) this.#start(turn, true); });
  }

  #start(turn: TurnRecord, claimed: boolean): void {
    this.#starting.add(turn.workspaceId);
    void this.#run(turn, claimed).finally(() => {
      this.#starting.delete(turn.workspaceId);
      this.schedule();
      this.#notifyIdle();
    });
  }

  /** Resolves when no turn is starting or live (tests and shutdown). */
  idle(): Promise<void> {
    if (this.#starting.size === 0 && this.#live.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /**
   * Cancels a turn (owner cancel of a lost outcome is handled by resolve).
   * `record` runs inside the transaction of a state change (the command
   * receipt); the provider hears the cancel only after that commit.
   */
  cancel(turnId: string, record: (r: { turnId: string; state: TurnState }) => void = () => {}): Result<{ turnId: string; state: TurnState }> {
    const s = this.#o.store;
    const turn = s.getTurn(turnId);
    if (!turn) return refuse("not_found");
    if (isFinal(turn.state) || turn.state === "cancelling") return ok({ turnId, state: turn.state });
    if (turn.state === "queued" || turn.state === "preparing") {
      // Before the dispatch boundary nothing reached the provider: cancel at once.
      const state = s.tx(() => {
        if (s.setTurnState(turnId, [turn.state], "cancelled")) this.#journalState(turn, "cancelled", null);
        const now = s.getTurn(turnId)?.state ?? "cancelled";
        record({ turnId, state: now });
        return now;
      });
      return ok({ turnId, state });
    }
    if (!LIVE.includes(turn.state)) return refuse("turn_fenced");
    const changed = s.tx(() => {
      if (!s.setTurnState(turnId, LIVE, "cancelling") || this.#journalState(turn, "cancelling", null) === 0) return false;
      record({ turnId, state: "cancelling" });
      return true;
    });
    if (!changed) return ok({ turnId, state: s.getTurn(turnId)?.state ?? turn.state });
    this.broker.closeTurn(turnId, "cancelled");
    const live = this.#live.get(turnId);
    live?.session.cancel();
    if (live) live.cancelTimer = this.#o.timers.set(() => this.#cancelExpired(turnId), this.#o.cancelConfirmMs);
    return ok({ turnId, state: "cancelling" });
  }

  /** turns.steer after its command committed: the live session hears the input; delivery is journaled (P-HIS-05). */
  steer(turnId: string, text: string): void {
    const s = this.#o.store;
    const turn = s.getTurn(turnId);
    const live = this.#live.get(turnId);
    const record = (r: { ok: true } | { ok: false; code: string }): void => {
      if (turn === null || this.#closed) return;
      s.tx(() => s.append({ threadId: turn.threadId, turnId, type: r.ok ? "steer_delivered" : "steer_failed", visibility: "owner", data: r.ok ? {} : { code: r.code } }));
    };
    if (live?.session.steer === undefined) return record({ ok: false, code: "turn_not_running" });
    void live.session.steer(text).then(record, () => record({ ok: false, code: "provider_error" }));
  }

  /** Stops scheduling and closes the executor (live turns become lost outcomes on restart). */
  async close(): Promise<void> {
    this.#closed = true;
    for (const l of this.#live.values()) this.#o.timers.clear(l.cancelTimer);
    this.broker.close();
    await this.#o.executor.close();
  }

  #journalState(turn: TurnRecord, to: TurnState, code: string | null, stopReason: string | null = null, extra: Record<string, string> = {}): number {
    return this.#o.store.append({ threadId: turn.threadId, turnId: turn.id, type: "turn_state", visibility: "owner", data: { state: to, code, stopReason, ...extra } });
  }

  /** queued -> preparing under the workspace lease; runs inside a transaction. */
  #enterPreparing(turn: TurnRecord): boolean {
    const s = this.#o.store;
    if (!takeLease(s, turn.workspaceId, turn.id, turn.threadId)) return false;
    if (!s.setTurnState(turn.id, ["queued"], "preparing")) { dropLease(s, turn.workspaceId, turn.id, turn.threadId); return false; }
    this.#journalState(turn, "preparing", null);
    // Policy metadata: owner journal only, never transcript, never "running" (P-ARC-05).
    s.append({ threadId: turn.threadId, turnId: turn.id, type: "turn_prepared", visibility: "owner", data: { approval: turn.config.approval, restricted: turn.config.restricted, configVersion: turn.config.configVersion, requestedMode: turn.config.requestedMode } });
    return true;
  }

  async #run(turn: TurnRecord, claimed: boolean): Promise<void> {
    const s = this.#o.store;
    if (!claimed && !s.tx(() => this.#enterPreparing(turn))) return;
    const fail = (code: string, extra: Record<string, string> = {}): void => {
      s.tx(() => {
        if (s.setTurnState(turn.id, ["preparing"], "failed", { errorCode: code })) this.#journalState(turn, "failed", code, null, extra);
        dropLease(s, turn.workspaceId, turn.id, turn.threadId);
      });
    };
    if (turn.attemptOf !== null && !this.#o.continuationReady(turn)) return fail("continuation_evidence_unavailable");
    const prompt = this.#o.promptFor(turn);
    if (prompt === null) return fail("payload_unavailable");
    const cwd = this.#o.workspaces.get(turn.workspaceId);
    if (cwd === undefined) return fail("workspace_not_granted");
    // The thread's context sources, asked only now that the turn holds its workspace (P-SDK-14).
    const prepared = this.#o.prepareTurn ? await this.#o.prepareTurn({ turnId: turn.id, threadId: turn.threadId, attemptOf: turn.attemptOf, prompt }) : { ok: true as const, context: [] };
    if (this.#closed) return;
    if (!prepared.ok) return fail(prepared.code, prepared.vetoCode === undefined ? {} : { vetoCode: prepared.vetoCode });
    // A pending history cut (fork, rollback) on an executor that cannot cut: the new session is seeded (P-HIS-03).
    // Native cuts fall back to seeding when Codex refuses them, so the history is read for every pending cut.
    const resume = s.getProviderSession(turn.threadId, turn.config.providerId);
    const history = resume?.cut === undefined ? [] : historyOf(s, turn.threadId);
    if (history === null && this.#o.executor.capabilities?.(turn.config.providerId).history !== "native") return fail("history_unavailable");
    const setup = await this.#o.executor.prepare({
      sessionKey: `${turn.threadId}:${turn.config.providerId}`,
      threadId: turn.threadId,
      providerId: turn.config.providerId,
      cwd,
      restricted: turn.config.restricted,
      requestedMode: turn.config.requestedMode,
      vcsIdentity: this.#o.vcsIdentity(turn.config.providerId),
      envGrants: this.#o.envGrants(turn.config.providerId),
      resume,
    });
    // Shutting down: leave the turn in `preparing`; recovery requeues it (nothing was sent).
    if (this.#closed) return;
    if (!setup.ok) return fail(SETUP_CODES_KEPT.includes(setup.code) ? setup.code : "provider_setup_failed");
    const session = setup.session;
    const seeded = setup.continuity.kind === "cut" && setup.continuity.method === "seeded";
    if (seeded && history === null) return fail("history_unavailable");
    if (seeded && history !== null && seedChars(history) > this.#o.historySeedMaxChars) return fail("history_too_large");
    // The persisted dispatch boundary: after this commit a lost outcome is unknown.
    const crossed = s.tx(() => {
      s.setTurnConfig(turn.id, { ...turn.config, nativeMode: session.nativeMode });
      s.append({ threadId: turn.threadId, turnId: turn.id, type: "native_mode", visibility: "owner", data: { ...session.nativeMode } });
      s.setProviderSession(turn.threadId, turn.config.providerId, session.nativeSessionId, setup.bindingKey);
      if (!s.setTurnState(turn.id, ["preparing"], "dispatched")) { dropLease(s, turn.workspaceId, turn.id, turn.threadId); return false; }
      recordContinuity(s, turn, setup.continuity);
      // Which memory ids reach the agent: ids and counts only (P-MEM-02).
      if (prepared.memory !== undefined) recordRecall((e) => s.append(e), turn.threadId, turn.id, prepared.memory);
      this.#journalState(turn, "dispatched", null);
      return true;
    });
    if (!crossed) return;
    this.#live.set(turn.id, { session, cancelTimer: undefined, alive: false });
    const outcome = session.dispatch(prompt, {
      event: (e) => this.#event(turn, e),
      permission: (a) => this.#permission(turn, a),
    }, seeded && history !== null ? [...seedContext(history), ...prepared.context] : prepared.context);
    this.#finish(turn, await this.#settled(turn, await outcome));
  }

  /** The outcome once the turn's entries are durable and, with a consumer store, held there (a completed turn whose store refused fails). */
  async #settled(turn: TurnRecord, outcome: TurnOutcome): Promise<TurnOutcome> {
    if (this.#o.settleTurn === undefined || this.#closed) return outcome;
    let unflushed = false;
    const held = await this.#o.settleTurn(turn.threadId, () => {
      try { this.#o.store.flush(); } catch (error) { unflushed = true; throw error; }
    });
    if (unflushed) return outcome.kind === "failed" ? outcome : { kind: "failed", code: "storage_write_failed" };
    if (held.ok || outcome.kind === "failed" || outcome.stopReason === "cancelled") return outcome;
    return { kind: "failed", code: held.code };
  }

  /** The first sign of the provider working on the prompt moves dispatched -> running. */
  #alive(turn: TurnRecord): void {
    // Once past `dispatched` a turn never returns to it: later events skip the transaction (and so keep their group commit).
    const live = this.#live.get(turn.id);
    if (live?.alive === true) return;
    const s = this.#o.store;
    // It rides in the group commit of the event that proves it (one COMMIT for both).
    s.txGrouped(() => { if (s.setTurnState(turn.id, ["dispatched"], "running")) this.#journalState(turn, "running", null); });
    if (live !== undefined) live.alive = true;
  }

  #event(turn: TurnRecord, e: ExecutorEvent): void {
    if (this.#closed) return;
    this.#alive(turn);
    // Liveness only: content held for whole-block redaction is journaled when released (issue 15).
    if (e.type === "activity") return;
    // In a transaction, so the agent events queued before them commit first and the journal keeps their order.
    const s = this.#o.store;
    // The native turn id rides in the agent events' group commit, in arrival order (a fork or rollback reads it only after the outcome's commit).
    if (e.type === "native_turn") return s.appendGrouped({ threadId: turn.threadId, turnId: turn.id, type: HISTORY_EVENTS.nativeTurn, visibility: "owner", data: { nativeTurnId: e.nativeTurnId, nativeThreadId: e.nativeThreadId } });
    if (e.type === "context_compacted") {
      s.tx(() => s.append({ threadId: turn.threadId, turnId: turn.id, type: "context_compacted", visibility: "transcript", data: {} }));
      return;
    }
    captureEvent(this.#o.store, turn, e);
  }

  #permission(turn: TurnRecord, ask: PermissionAsk): Promise<PermissionDecision> {
    // During shutdown no answer is given: the agent is about to be stopped.
    if (this.#closed) return new Promise(() => {});
    // Whatever the agent hears back, the events it sent before asking are durable first.
    this.#alive(turn);
    this.#o.store.flush();
    const cur = this.#o.store.getTurn(turn.id);
    // Only a live turn can be asked; anything else gets cancelled (P-TRN-14/18).
    if (!cur || !LIVE.includes(cur.state)) return Promise.resolve({ outcome: "cancelled" });
    try {
      return this.broker.open(cur, ask, cur.config.approval);
    } catch {
      // The interaction could not be made durable: the agent gets no answer at all (P-ARC-15).
      return new Promise(() => {});
    }
  }

  #pendingChanged(turnId: string): void {
    const s = this.#o.store;
    const turn = s.getTurn(turnId);
    if (!turn) return;
    const pending = this.broker.pendingCount(turnId);
    s.tx(() => {
      if (pending > 0 && s.setTurnState(turnId, ["running"], "waiting")) this.#journalState(turn, "waiting", null);
      if (pending === 0 && s.setTurnState(turnId, ["waiting"], "running")) this.#journalState(turn, "running", null);
    });
  }

  #cancelExpired(turnId: string): void {
    const s = this.#o.store;
    const turn = s.getTurn(turnId);
    if (!turn) return;
    // No confirmation before the deadline: interrupted, and the workspace stays fenced.
    s.tx(() => {
      if (!s.setTurnState(turnId, ["cancelling"], "interrupted", { errorCode: "cancel_unconfirmed" })) return;
      this.#journalState(turn, "interrupted", "cancel_unconfirmed");
      fenceWorkspace(s, turn.workspaceId, turnId, turn.threadId);
    });
    const live = this.#live.get(turnId);
    this.#live.delete(turnId);
    void live?.session.close();
    this.#notifyIdle();
  }

  #finish(turn: TurnRecord, outcome: TurnOutcome): void {
    const s = this.#o.store;
    const live = this.#live.get(turn.id);
    if (live) this.#o.timers.clear(live.cancelTimer);
    this.#live.delete(turn.id);
    // An outcome caused by our own shutdown proves nothing: recovery decides on restart.
    if (this.#closed) {
      this.#notifyIdle();
      return;
    }
    this.broker.closeTurn(turn.id, "closed");
    s.tx(() => {
      const cur = s.getTurn(turn.id);
      if (!cur || !ENDABLE.includes(cur.state)) {
        // An outcome after the confirmation deadline changes nothing (P-TRN-02).
        s.append({ threadId: turn.threadId, turnId: turn.id, type: "late_outcome", visibility: "owner", data: { kind: outcome.kind } });
        return;
      }
      if (outcome.kind === "failed" && outcome.code === "provider_exited") {
        if (s.setTurnState(turn.id, ENDABLE, "interrupted", { errorCode: "provider_exited" })) {
          this.#journalState(turn, "interrupted", "provider_exited");
          fenceWorkspace(s, turn.workspaceId, turn.id, turn.threadId);
        }
        return;
      }
      const to: TurnState = outcome.kind === "failed" ? "failed" : outcome.stopReason === "cancelled" ? "cancelled" : "completed";
      const patch = outcome.kind === "failed" ? { errorCode: outcome.code } : {};
      if (s.setTurnState(turn.id, ENDABLE, to, patch)) this.#journalState(turn, to, outcome.kind === "failed" ? outcome.code : null, outcome.kind === "stopped" ? outcome.stopReason : null);
      dropLease(s, turn.workspaceId, turn.id, turn.threadId);
    });
    this.#notifyIdle();
  }

  #notifyIdle(): void {
    if (this.#starting.size !== 0 || this.#live.size !== 0) return;
    const waiting = this.#idle;
    this.#idle = [];
    for (const w of waiting) w();
  }
}
