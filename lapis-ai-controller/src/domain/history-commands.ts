// The history controls as commands (P-HIS): threads.fork, threads.rollback,
// threads.compact and turns.steer. Each is idempotent on its command identity
// (domain/commands.ts) and journaled. Fork, rollback and compaction only
// record: the cut or compaction is stored with the thread's native session and
// applied by the next turn's setup, inside that turn's workspace lease, before
// the dispatch boundary (compaction right after it, before the prompt). Steer
// reaches the running turn after its command committed.
import { runCommand, type Accepted, type Actor } from "./commands.ts";
import { ControllerFailure, controllerError, err, ok, type ErrorCode, type Result } from "./errors.ts";
import type { ExecutorCapabilities, HistoryCut } from "./executor-port.ts";
import { historyOf, HISTORY_EVENTS, keptTurns, nativeTurnOf, rolledBackTurns, seedChars } from "./history-seed.ts";
import type { Json, ThreadRecord } from "./records.ts";
import type { ThreadCommandDeps } from "./thread-commands.ts";
import { submissionText } from "./turn-commands.ts";
import { isFinal } from "./turn-state.ts";
import type { EngineStore } from "./turn-store-port.ts";

/** What the history commands need besides the thread command deps. */
export interface HistoryDeps {
  readonly engine: EngineStore;
  /** What the provider's executor offers (cuts natively or by seeding, steer, compaction). */
  readonly capabilities: (providerId: string) => ExecutorCapabilities;
  /** turns.steer after commit: the live session hears the input. */
  readonly steer: (turnId: string, text: string) => void;
  /** The longest history a seeding executor may be given (`limits.turns.historySeedMaxChars`). */
  readonly seedMaxChars: number;
}

/** Refuses inside a command transaction: the transaction unwinds, nothing is written. */
function refuse(code: ErrorCode, retryable = false): never {
  throw new ControllerFailure(controllerError(code, { retryable }));
}

function busy(h: HistoryDeps, threadId: string): boolean {
  return h.engine.listTurns({ threadId }).some((t) => !isFinal(t.state));
}

/** threads.fork input. */
export interface ForkInput { readonly commandId: string; readonly afterTurnId: string }

/**
 * threads.fork: a new thread of the caller whose agent history is the
 * source's through `afterTurnId`; the source is not touched. Its first turn
 * forks the agent's session (native `thread/fork` through that turn) or seeds
 * a new one from the journal.
 */
export function forkThread(deps: ThreadCommandDeps, h: HistoryDeps, actor: Actor, source: ThreadRecord, input: ForkInput): Result<Accepted> {
  const { afterTurnId, commandId } = input;
  let threadId = "";
  return runCommand(deps, actor, "threads.fork", commandId, { threadId: source.threadId, afterTurnId }, () => {
    const es = h.engine;
    const turn = es.getTurn(afterTurnId);
    if (turn === null || turn.threadId !== source.threadId) return err(controllerError("not_found"));
    if (!isFinal(turn.state)) refuse("turn_active", true);
    // Only a completed turn the agent still has can be a fork point; its history must be held in full.
    if (turn.state !== "completed" || rolledBackTurns(es, source.threadId).has(afterTurnId)) refuse("history_unavailable");
    const kept = historyOf(es, source.threadId, afterTurnId);
    if (kept === null) return refuse("history_unavailable");
    const session = es.getProviderSession(source.threadId, source.provider);
    if (session === null || session.bindingKey === null) refuse("history_unavailable");
    const native = h.capabilities(source.provider).history === "native";
    if (!native && seedChars(kept) > h.seedMaxChars) refuse("history_too_large");
    const through = native ? nativeTurnOf(es, afterTurnId) : null;
    if (native && through === null) refuse("history_unavailable");
    // Native: the Codex thread the turn ran in (the source's current one, or an earlier one a reset replaced).
    const nativeSource = through?.threadId ?? session.nativeSessionId;
    threadId = deps.newId();
    const now = deps.clock.now();
    const inserted = deps.store.threads.insert({
      threadId, principal: actor.principal, application: actor.application, workspaceId: source.workspaceId, provider: source.provider,
      retention: source.retention, restricted: source.restricted, configVersion: 1, config: source.config, binding: source.binding, createdAt: now, updatedAt: now,
    });
    if (!inserted.ok) return inserted;
    es.append({ threadId, turnId: null, type: "thread_created", visibility: "transcript", data: { configVersion: 1 } });
    es.append({ threadId, turnId: null, type: HISTORY_EVENTS.forked, visibility: "transcript", data: { sourceThreadId: source.threadId, afterTurnId, commandId } });
    const cut: HistoryCut = { kind: "fork", throughNativeTurnId: through?.turnId ?? null };
    es.setProviderSession(threadId, source.provider, nativeSource, session.bindingKey, { cut });
    return ok({ commandId, threadId, sourceThreadId: source.threadId, afterTurnId, configVersion: 1 });
  });
}

/** threads.rollback input. */
export interface RollbackInput { readonly commandId: string; readonly turns: number }

/**
 * threads.rollback: the thread's last `turns` completed turns leave the
 * agent's context for later turns. The journal keeps them, each marked by a
 * `turn_rolled_back` entry; files the agent changed stay as they are.
 */
export function rollbackThread(deps: ThreadCommandDeps, h: HistoryDeps, actor: Actor, thread: ThreadRecord, input: RollbackInput): Result<Accepted> {
  const { commandId, turns } = input;
  const { threadId, provider } = thread;
  return runCommand(deps, actor, "threads.rollback", commandId, { threadId, turns }, () => {
    const es = h.engine;
    if (busy(h, threadId)) refuse("thread_busy", true);
    const kept = keptTurns(es, threadId);
    if (!Number.isInteger(turns) || turns < 1 || turns > kept.length) refuse("rollback_out_of_range");
    const dropped = kept.slice(kept.length - turns);
    const first = dropped[0];
    const session = es.getProviderSession(threadId, provider);
    if (first === undefined || session === null || session.bindingKey === null) return refuse("history_unavailable");
    const native = h.capabilities(provider).history === "native";
    // Native: revert before the first dropped turn of the current Codex thread; dropped turns an earlier reset
    // left behind are out of its context already. A dropped turn without a recorded id cannot be placed.
    const ids = native ? dropped.map((t) => nativeTurnOf(es, t.id)) : [];
    if (ids.some((x) => x === null)) refuse("history_unavailable");
    const before = ids.find((x) => x?.threadId === session.nativeSessionId)?.turnId ?? null;
    for (const t of dropped) es.append({ threadId, turnId: t.id, type: HISTORY_EVENTS.rolledBackTurn, visibility: "transcript", data: { commandId } });
    const keptThrough = kept[kept.length - turns - 1]?.id ?? null;
    es.append({ threadId, turnId: null, type: HISTORY_EVENTS.rolledBack, visibility: "transcript", data: { commandId, turns, keptThroughTurnId: keptThrough } });
    // The remaining history must be whole for an executor that seeds it.
    const remaining = native ? [] : historyOf(es, threadId);
    if (remaining === null) return refuse("history_unavailable");
    if (seedChars(remaining) > h.seedMaxChars) refuse("history_too_large");
    const cut: HistoryCut = { kind: "rollback", beforeNativeTurnId: before };
    es.setProviderSession(threadId, provider, session.nativeSessionId, session.bindingKey, { cut, ...(session.compact === true ? { compact: true } : {}) });
    return ok({ commandId, threadId, turns, keptThroughTurnId: keptThrough });
  });
}

/** threads.compact: the agent compacts the thread's context before the thread's next turn (native only). */
export function compactThread(deps: ThreadCommandDeps, h: HistoryDeps, actor: Actor, thread: ThreadRecord, commandId: string): Result<Accepted> {
  const { threadId, provider } = thread;
  return runCommand(deps, actor, "threads.compact", commandId, { threadId }, () => {
    if (!h.capabilities(provider).compact) refuse("unsupported");
    const es = h.engine;
    const session = es.getProviderSession(threadId, provider);
    // Nothing to compact before the agent has a session for the thread.
    if (session === null || session.bindingKey === null) return refuse("history_unavailable");
    es.setProviderSession(threadId, provider, session.nativeSessionId, session.bindingKey, { ...(session.cut === undefined ? {} : { cut: session.cut }), compact: true });
    es.append({ threadId, turnId: null, type: "compaction_requested", visibility: "transcript", data: { commandId } });
    return ok({ commandId, threadId, compaction: "before_next_turn" });
  });
}

/** turns.steer input. */
export interface SteerInput { readonly commandId: string; readonly turnId: string; readonly input: Json }

/** turns.steer: input added to the running turn where the executor can; never a new turn (P-HIS-05). */
export function steerTurn(deps: ThreadCommandDeps, h: HistoryDeps, actor: Actor, thread: ThreadRecord, s: SteerInput): Result<Accepted> {
  const text = submissionText(s.input);
  if (text === null || text.length === 0) return err(controllerError("invalid_params"));
  const { commandId, turnId } = s;
  return runCommand(deps, actor, "turns.steer", commandId, { turnId, input: s.input }, () => {
    const es = h.engine;
    const turn = es.getTurn(turnId);
    if (turn === null || turn.threadId !== thread.threadId) return err(controllerError("not_found"));
    if (!h.capabilities(thread.provider).steer) refuse("steer_unsupported");
    if (!["dispatched", "running", "waiting"].includes(turn.state)) refuse("turn_not_running");
    es.append({ threadId: thread.threadId, turnId, type: "turn_steered", visibility: "transcript", data: { commandId, text } });
    return ok({ commandId, turnId, threadId: thread.threadId, steered: true });
  }, () => h.steer(turnId, text));
}
