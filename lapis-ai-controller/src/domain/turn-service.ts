// The turns facade the transport dispatch calls: continue, cancel, resolve,
// interactions and turn views over one engine and one store (submit enters
// through the TurnPort, domain/turn-port.ts).
import { runCommand, runOperation, type Accepted, type Actor, type CommandDeps, type RecordReceipt } from "./commands.ts";
import { controllerError, err, type Result as CResult } from "./errors.ts";
import type { Executor, VcsIdentity } from "./executor-port.ts";
import type { InteractionAnswer, Timers } from "./interactions.ts";
import type { Json } from "./records.ts";
import { submissionText, TurnCommands } from "./turn-commands.ts";
import { TurnEngine, type EngineOptions } from "./turn-execution.ts";
import { recoverTurns, resolveTurn, type RecoverySummary, type Resolution } from "./turn-recovery.ts";
import { ok, refuse, toOutcome, type Result } from "./turn-result.ts";
import { isFencing, type TurnState } from "./turn-state.ts";
import { readRecall, RECALL_KINDS, type TurnMemory } from "./memory-journal.ts";
import { usageOfEntries, type TurnUsage } from "./token-usage.ts";
import type { InteractionRecord, JournalEntry, PreparedConfig, EngineStore, TurnRecord } from "./turn-store-port.ts";
import type { PreparationPort } from "./turn-preparation.ts";
import type { HistoryDeps } from "./history-commands.ts";

/** Limits of the turn service (validated and capped here). */
export type TurnLimits = {
  cancelConfirmMs: number; interactionDeadlineMs: number;
  /** The longest history a fork or rollback seeds into a new agent session (chars; P-HIS-10). */
  historySeedMaxChars: number;
};

/** Hard caps whatever the configuration says. */
export const TURN_LIMIT_CAPS: TurnLimits = { cancelConfirmMs: 600_000, interactionDeadlineMs: 3_600_000, historySeedMaxChars: 4_000_000 };

/** Defaults when configuration omits a limit. */
export const TURN_LIMIT_DEFAULTS: TurnLimits = { cancelConfirmMs: 30_000, interactionDeadlineMs: 600_000, historySeedMaxChars: 1_000_000 };

/** A turn as snapshots show it: state and retained policy metadata, no payload. */
export type TurnView = { turnId: string; threadId: string; state: TurnState; attemptOf: string | null; errorCode: string | null; config: PreparedConfig };

/** Construction options. */
export type TurnServiceOptions = {
  store: EngineStore;
  executor: Executor;
  workspaces: ReadonlyMap<string, string>;
  limits: Partial<TurnLimits>;
  newId: () => string;
  timers?: Timers;
  vcsIdentity?: (providerId: string) => VcsIdentity | null;
  envGrants?: (providerId: string) => Readonly<Record<string, string>>;
  /** The native mode each provider requests by default (config `providers.<id>.mode`). */
  providerMode?: (providerId: string) => string | null;
  /** Context and preparation endpoints asked when a turn becomes eligible (issue 25 point 1). */
  prepareTurn?: PreparationPort;
  /** Before a turn's end is committed: its entries reach the consumer transcript store (a failure fails a completed turn). */
  settleTurn?: EngineOptions["settleTurn"];
};

/** How an actor appears in audit rows. */
function actorName(actor: Actor): string {
  return `${actor.principal}/${actor.application}`;
}

function capped(v: number | undefined, def: number, cap: number): number {
  if (v === undefined) return def;
  if (!Number.isInteger(v) || v <= 0) throw new Error("invalid turn limit");
  return Math.min(v, cap);
}

const realTimers: Timers = { set: (fn, ms) => setTimeout(fn, ms), clear: (h) => clearTimeout(h as ReturnType<typeof setTimeout>) };

/** The turns facade. */
export class TurnService {
  readonly store: EngineStore;
  readonly engine: TurnEngine;
  readonly commands: TurnCommands;
  readonly #executor: Executor;
  readonly #seedMaxChars: number;

  constructor(o: TurnServiceOptions) {
    this.store = o.store;
    this.#executor = o.executor;
    const limits: TurnLimits = {
      cancelConfirmMs: capped(o.limits.cancelConfirmMs, TURN_LIMIT_DEFAULTS.cancelConfirmMs, TURN_LIMIT_CAPS.cancelConfirmMs),
      interactionDeadlineMs: capped(o.limits.interactionDeadlineMs, TURN_LIMIT_DEFAULTS.interactionDeadlineMs, TURN_LIMIT_CAPS.interactionDeadlineMs),
      historySeedMaxChars: capped(o.limits.historySeedMaxChars, TURN_LIMIT_DEFAULTS.historySeedMaxChars, TURN_LIMIT_CAPS.historySeedMaxChars),
    };
    this.#seedMaxChars = limits.historySeedMaxChars;
    let commands: TurnCommands | null = null;
    this.engine = new TurnEngine({
      store: o.store, executor: o.executor, workspaces: o.workspaces, cancelConfirmMs: limits.cancelConfirmMs,
      interactionDeadlineMs: limits.interactionDeadlineMs, historySeedMaxChars: limits.historySeedMaxChars, newId: o.newId, timers: o.timers ?? realTimers,
      vcsIdentity: o.vcsIdentity ?? (() => null), envGrants: o.envGrants ?? (() => ({})),
      continuationReady: (t) => commands?.continuationReady(t) ?? false,
      promptFor: (t) => commands?.promptFor(t) ?? null,
      ...(o.prepareTurn === undefined ? {} : { prepareTurn: o.prepareTurn }),
      ...(o.settleTurn === undefined ? {} : { settleTurn: o.settleTurn }),
    });
    commands = new TurnCommands({ store: o.store, newId: o.newId, ...(o.providerMode ? { providerMode: o.providerMode } : {}) });
    this.commands = commands;
  }

  /** Recovery before any external work, then scheduling. */
  start(): RecoverySummary {
    const summary = this.recover();
    this.engine.schedule();
    return summary;
  }

  /** Recovery alone; the service schedules once the endpoints turns rely on can be reached. */
  recover(): RecoverySummary {
    return recoverTurns(this.store);
  }

  /** turns.continue: a linked attempt after a settled prior turn, once per command identity (P-TRN-25). */
  continue(deps: CommandDeps, actor: Actor, c: { commandId: string; turnId: string; input: Json }): CResult<Accepted> {
    const text = submissionText(c.input);
    if (text === null) return err(controllerError("invalid_params"));
    return runCommand(deps, actor, "turns.continue", c.commandId, { turnId: c.turnId, input: c.input }, () => {
      const thread = this.commands.checkContinue(actor, c.turnId);
      if (!thread.ok) return toOutcome(thread);
      const accepted = this.commands.acceptTurn(thread.value, c.commandId, c.turnId, text);
      return accepted.ok ? toOutcome(ok({ ...accepted.value })) : toOutcome(accepted);
    }, () => this.engine.schedule());
  }

  /** turns.cancel; on a lost-outcome turn the owner's cancel is the confirmation (P-TRN-08). `record` as in runOperation. */
  cancel(turnId: string, actor: string, record?: RecordReceipt): Result<{ turnId: string; state: TurnState }> {
    const t = this.store.getTurn(turnId);
    if (t && isFencing(t.state)) return this.resolve(turnId, "cancelled", true, actor, record);
    return this.engine.cancel(turnId, record);
  }

  /** turns.resolve. */
  resolve(turnId: string, as: unknown, confirmExternalStopped: unknown, actor: string, record?: RecordReceipt): Result<{ turnId: string; state: Resolution }> {
    const r = resolveTurn(this.store, turnId, as, confirmExternalStopped, actor, record);
    if (r.ok) this.engine.schedule();
    return r;
  }

  /** interactions.respond. */
  respond(turnId: string, interactionId: string, answer: InteractionAnswer, record?: RecordReceipt): Result<{ interactionId: string; state: string }> {
    return this.engine.broker.respond(turnId, interactionId, answer, record);
  }

  /** turns.cancel under a command identity: one receipt, the provider cancelled once (issue 25 point 4). */
  cancelCommand(deps: CommandDeps, actor: Actor, c: { commandId: string; turnId: string }): CResult<Accepted> {
    return runOperation(deps, actor, "turns.cancel", c.commandId, { turnId: c.turnId }, (record) => toOutcome(this.cancel(c.turnId, actorName(actor), record)));
  }

  /** turns.resolve under a command identity. */
  resolveCommand(deps: CommandDeps, actor: Actor, c: { commandId: string; turnId: string; as: unknown; confirmExternalStopped: boolean }): CResult<Accepted> {
    const input = { turnId: c.turnId, as: c.as ?? null, confirmExternalStopped: c.confirmExternalStopped };
    return runOperation(deps, actor, "turns.resolve", c.commandId, input, (record) => toOutcome(this.resolve(c.turnId, c.as, c.confirmExternalStopped, actorName(actor), record)));
  }

  /** interactions.respond under a command identity: the agent hears one answer. */
  respondCommand(deps: CommandDeps, actor: Actor, c: { commandId: string; turnId: string; interactionId: string; answer: InteractionAnswer }): CResult<Accepted> {
    const input = { turnId: c.turnId, interactionId: c.interactionId, answer: c.answer };
    return runOperation(deps, actor, "interactions.respond", c.commandId, input, (record) => toOutcome(this.respond(c.turnId, c.interactionId, c.answer, record)));
  }

  /** The view of one turn. */
  turn(turnId: string): Result<TurnView> {
    const t = this.store.getTurn(turnId);
    if (!t) return refuse("not_found");
    return ok(this.viewOf(t));
  }

  /** The view of a turn record already read. */
  viewOf(t: TurnRecord): TurnView {
    return { turnId: t.id, threadId: t.threadId, state: t.state, attemptOf: t.attemptOf, errorCode: t.errorCode, config: t.config };
  }

  /** What recall gave a turn (its preparation metadata: ids and counts), or null. */
  memory(turnId: string): TurnMemory | null { return readRecall(this.store.journal({ turnId, kinds: RECALL_KINDS })); }

  /** The turn's newest reported token usage, or "unreported". */
  usage(turnId: string): TurnUsage { return usageOfEntries(this.store.journal({ turnId, kinds: ["token_usage"] })); }

  /** Interactions of a turn. */
  interactions(turnId: string): InteractionRecord[] { return this.store.listInteractions(turnId); }

  /** The owner journal of a thread, in order. */
  journal(threadId: string, afterSeq = 0): JournalEntry[] { return this.store.journal({ threadId, afterSeq }); }

  /** What the history commands need: the store, each provider's executor capabilities, the engine's steer (P-HIS). */
  history(): HistoryDeps {
    const executor = this.#executor;
    return {
      engine: this.store,
      capabilities: (providerId) => executor.capabilities?.(providerId) ?? { history: "seed", steer: false, compact: false },
      steer: (turnId, text) => this.engine.steer(turnId, text),
      seedMaxChars: this.#seedMaxChars,
    };
  }

  /** Stops scheduling and closes provider sessions. */
  async close(): Promise<void> { await this.engine.close(); }
}
