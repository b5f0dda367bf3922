// Turn commands: turns.submit and turns.continue accept a turn once per
// command identity (domain/commands.ts, P-API-07, P-TRN-20/25), record it
// inside the command transaction and schedule it only after the commit.
import { runCommand, type Accepted, type Actor, type CommandDeps } from "./commands.ts";
import { controllerError, err, type Result as CResult } from "./errors.ts";
import type { TurnPort } from "./protocol-ports.ts";
import type { Json, ThreadRecord as StoredThread } from "./records.ts";
import { continuationPrompt, continuationRefusal, hasUnknownToolEffect } from "./continuation.ts";
import { captureConfig } from "./thread-config.ts";
import { assistantText } from "./transcript.ts";
import { isFinal } from "./turn-state.ts";
import { ok, refuse, type Result } from "./turn-result.ts";
import type { Retention, ThreadRecord, TurnRecord, EngineStore } from "./turn-store-port.ts";

/** The receipt of an accepted turn: metadata and the source identity, no payload field (P-STO-10). */
export type TurnReceipt = { commandId: string; turnId: string; threadId: string; attemptOf: string | null; retention: Retention; sourceRef?: string };

const MAX_PROMPT = 1_000_000;

function owns(actor: Actor, thread: ThreadRecord): boolean {
  return thread.principal === actor.principal && thread.application === actor.application;
}

/** The prompt text of a submission: a string, or `{ text }`. */
export function submissionText(input: Json): string | null {
  if (typeof input === "string") return input;
  if (input !== null && typeof input === "object" && !Array.isArray(input)) {
    const text = (input as { readonly [k: string]: Json }).text;
    if (typeof text === "string") return text;
  }
  return null;
}

/** What a submit carries besides the thread; identity comes from the session. */
export interface SubmitInput {
  readonly commandId: string;
  readonly input: Json;
  /** The application's own reference for the prompt's source; the receipt keeps it, never the text (P-STO-10). */
  readonly sourceRef?: string | undefined;
}

/** turns.submit on a thread the caller may see and is attached to. */
export function submitTurn(deps: CommandDeps, turns: TurnPort | null, actor: Actor, thread: StoredThread, s: SubmitInput): CResult<Accepted> {
  const { threadId } = thread;
  const ref = s.sourceRef === undefined ? {} : { sourceRef: s.sourceRef };
  return runCommand(deps, actor, "turns.submit", s.commandId, { threadId, input: s.input, ...ref }, () => {
    if (turns === null) return err(controllerError("turns_unavailable", { retryable: true }));
    return turns.acceptSubmit(actor, thread, { threadId, commandId: s.commandId, input: s.input, ...ref });
  }, (receipt) => turns?.afterCommit(receipt));
}

/** Turn-level commands. */
export class TurnCommands {
  #store: EngineStore;
  #newId: () => string;
  #providerMode: (providerId: string) => string | null;

  constructor(o: { store: EngineStore; newId: () => string; providerMode?: (providerId: string) => string | null }) {
    this.#store = o.store;
    this.#providerMode = o.providerMode ?? (() => null);
    this.#newId = o.newId;
  }

  /** The prompt to send for a turn, or null when its payload is gone. */
  promptFor(turn: TurnRecord): string | null {
    const stored = this.#store.getPrompt(turn.id);
    if (stored === null || turn.attemptOf === null) return stored;
    const evidence = assistantText(this.#store, turn.attemptOf);
    return evidence === null ? null : continuationPrompt(stored, turn.attemptOf, evidence);
  }

  /** Preparation recheck of a continuation's prior outcome and evidence (P-TRN-26). */
  continuationReady(turn: TurnRecord): boolean {
    if (turn.attemptOf === null) return true;
    const prior = this.#store.getTurn(turn.attemptOf);
    if (!prior || !isFinal(prior.state) || hasUnknownToolEffect(this.#store, prior.id)) return false;
    return assistantText(this.#store, prior.id) !== null;
  }

  /** Checks a continuation of `priorTurnId` by `actor`; the thread it continues on. */
  checkContinue(actor: Actor, priorTurnId: string): Result<ThreadRecord> {
    const prior = this.#store.getTurn(priorTurnId);
    const thread = prior ? this.#store.getThread(prior.threadId) : null;
    // Scope authorization applies to the prior turn (P-TRN-24).
    if (!prior || !thread || !owns(actor, thread)) return refuse("not_found");
    const why = continuationRefusal(this.#store, prior);
    return why ? refuse(why) : ok(thread);
  }

  /**
   * Records one accepted turn (row, accepted configuration, prompt, journal).
   * Runs inside the caller's command transaction; scheduling is the caller's
   * after-commit step.
   */
  acceptTurn(thread: ThreadRecord, commandId: string, attemptOf: string | null, text: string, sourceRef?: string): Result<TurnReceipt> {
    if (typeof text !== "string" || text.length === 0 || text.length > MAX_PROMPT) return refuse("invalid_params");
    const config = captureConfig(thread, this.#providerMode(thread.providerId));
    // The receipt's strings (prompt, command id, references) go to the scanner in one round trip, not one per entry.
    this.#store.prescan?.([text, commandId, ...(attemptOf === null ? [] : [attemptOf]), ...(sourceRef === undefined ? [] : [sourceRef])]);
    const turn = this.#store.insertTurn({ id: this.#newId(), threadId: thread.id, commandId, attemptOf, state: "queued", workspaceId: thread.workspaceId, config, errorCode: null }, text);
    const ref = sourceRef === undefined ? {} : { sourceRef };
    this.#store.append({ threadId: thread.id, turnId: turn.id, type: "turn_queued", visibility: "owner", data: { commandId, attemptOf, configVersion: config.configVersion, ...ref } });
    return ok({ commandId, turnId: turn.id, threadId: thread.id, attemptOf, retention: thread.retention, ...ref });
  }
}
