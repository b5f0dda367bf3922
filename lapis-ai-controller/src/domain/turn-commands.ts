// Mutations keyed by command identity (P-API-07, P-TRN-20/25): the same
// commandId with the same input returns the byte-identical receipt; with
// different input it is a command_conflict. Lost acks are resolved by looking
// the command up, never by a fresh command (P-TRN-28).
import { createHash } from "node:crypto";
import { parseApprovalPolicy } from "./approval-policy.ts";
import { continuationPrompt, continuationRefusal, hasUnknownToolEffect } from "./continuation.ts";
import { captureConfig } from "./thread-config.ts";
import { assistantText } from "./transcript.ts";
import { isFinal } from "./turn-state.ts";
import { ok, refuse, type Result } from "./turn-result.ts";
import type { Retention, ThreadRecord, TurnRecord, EngineStore } from "./turn-store-port.ts";

/** The receipt of an accepted turn; no payload field (P-STO-10). */
export type TurnReceipt = { commandId: string; turnId: string; threadId: string; attemptOf: string | null; retention: Retention };

/** Who issues a command: stamped from the AuthSession, never from client input. */
export type Actor = { principal: string; application: string };

/** Thread creation input (access fields come from the session, not the client). */
export type NewThread = { principal: string; application: string; workspaceId: string; providerId: string; restricted?: boolean; approvalPolicy?: unknown; requestedMode?: string | null; retention?: Retention };

const MAX_PROMPT = 1_000_000;

function owns(actor: Actor, thread: ThreadRecord): boolean {
  return thread.principal === actor.principal && thread.application === actor.application;
}

function hashOf(v: unknown): string {
  return createHash("sha256").update(JSON.stringify(v)).digest("hex");
}

/** Turn-level commands. */
export class TurnCommands {
  #store: EngineStore;
  #newId: () => string;
  #workspaces: ReadonlySet<string>;
  #schedule: () => void;
  #providerMode: (providerId: string) => string | null;

  constructor(o: { store: EngineStore; newId: () => string; workspaces: ReadonlySet<string>; schedule: () => void; providerMode?: (providerId: string) => string | null }) {
    this.#store = o.store;
    this.#providerMode = o.providerMode ?? (() => null);
    this.#newId = o.newId;
    this.#workspaces = o.workspaces;
    this.#schedule = o.schedule;
  }

  /** Creates a thread bound to one configured workspace. */
  createThread(input: NewThread): Result<ThreadRecord> {
    if (!this.#workspaces.has(input.workspaceId)) return refuse("workspace_not_granted");
    const policy = parseApprovalPolicy(input.approvalPolicy);
    if (!policy.ok) return refuse(policy.code);
    const t: ThreadRecord = {
      id: this.#newId(), principal: input.principal, application: input.application, workspaceId: input.workspaceId,
      providerId: input.providerId, restricted: input.restricted ?? false, approvalPolicy: policy.value,
      requestedMode: input.requestedMode ?? null, retention: input.retention ?? "full", configVersion: 1,
    };
    this.#store.insertThread(t);
    return ok(t);
  }

  /** turns.submit: accept a prompt on a thread. */
  submit(actor: Actor, threadId: string, commandId: string, prompt: string): Result<TurnReceipt> {
    return this.#accept(actor, "turns.submit", commandId, { threadId, prompt }, () => {
      const thread = this.#store.getThread(threadId);
      if (!thread || !owns(actor, thread)) return refuse("not_found");
      return ok({ thread, attemptOf: null });
    }, prompt);
  }

  /** turns.continue: a linked attempt after a settled prior turn. */
  continue(actor: Actor, priorTurnId: string, commandId: string, instructions: string): Result<TurnReceipt> {
    return this.#accept(actor, "turns.continue", commandId, { priorTurnId, instructions }, () => {
      const thread = this.checkContinue(actor, priorTurnId);
      return thread.ok ? ok({ thread: thread.value, attemptOf: priorTurnId }) : refuse(thread.code);
    }, instructions);
  }

  /** commands.get: the stored receipt of a command, if any. */
  receipt(actor: Actor, commandId: string): TurnReceipt | null {
    const c = this.#store.getCommand(actor.principal, actor.application, commandId);
    return c ? (JSON.parse(c.receipt) as TurnReceipt) : null;
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
  acceptTurn(thread: ThreadRecord, commandId: string, attemptOf: string | null, text: string): Result<TurnReceipt> {
    if (typeof text !== "string" || text.length === 0 || text.length > MAX_PROMPT) return refuse("invalid_params");
    const config = captureConfig(thread, this.#providerMode(thread.providerId));
    const turn = this.#store.insertTurn({ id: this.#newId(), threadId: thread.id, commandId, attemptOf, state: "queued", workspaceId: thread.workspaceId, config, errorCode: null }, text);
    this.#store.append({ threadId: thread.id, turnId: turn.id, type: "turn_queued", visibility: "owner", data: { commandId, attemptOf, configVersion: config.configVersion } });
    return ok({ commandId, turnId: turn.id, threadId: thread.id, attemptOf, retention: thread.retention });
  }

  #accept(actor: Actor, method: string, commandId: string, input: unknown, check: () => Result<{ thread: ThreadRecord; attemptOf: string | null }>, text: string): Result<TurnReceipt> {
    if (typeof commandId !== "string" || commandId.length === 0 || commandId.length > 200) return refuse("invalid_params");
    const inputHash = hashOf([method, input]);
    const r = this.#store.tx((): Result<TurnReceipt> => {
      const existing = this.#store.getCommand(actor.principal, actor.application, commandId);
      if (existing) {
        return existing.method === method && existing.inputHash === inputHash ? ok(JSON.parse(existing.receipt) as TurnReceipt) : refuse("command_conflict");
      }
      const c = check();
      if (!c.ok) return refuse(c.code);
      const accepted = this.acceptTurn(c.value.thread, commandId, c.value.attemptOf, text);
      if (!accepted.ok) return accepted;
      this.#store.insertCommand({ principal: actor.principal, application: actor.application, commandId, method, inputHash, receipt: JSON.stringify(accepted.value) });
      return accepted;
    });
    if (r.ok) this.#schedule();
    return r;
  }
}
