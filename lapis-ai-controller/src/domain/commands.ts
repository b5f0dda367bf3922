// Mutations keyed by command identity (P-API-07, P-TRN-20/25): one command
// identity, one receipt, byte for byte. The command row and the command's own
// writes commit in one transaction; a repeat never runs `accept` again, and the
// same id with other input is a command_conflict. A lost acknowledgement is
// resolved by looking the command up, never by a fresh command (P-TRN-28).
import { createHash } from "node:crypto";
import { canonicalJson } from "./canonical-json.ts";
import { ControllerFailure, controllerError, err, failureOf, ok, type Result } from "./errors.ts";
import type { Clock, CommandStore, Transactor } from "./ports.ts";
import type { CommandRecord, JournalMetadata } from "./records.ts";

/** A receipt: short scalar facts only, never a payload (P-STO-10). */
export type Receipt = JournalMetadata;

/** Who issues a command: stamped from the AuthSession, never from client input. */
export interface Actor {
  readonly principal: string;
  readonly application: string;
}

/** The store and clock a command needs. */
export interface CommandDeps {
  readonly store: Transactor & { readonly commands: CommandStore };
  readonly clock: Clock;
}

/** An accepted command: its stored record, whether this call created it, and the after-commit work of a new one. */
export interface Accepted {
  readonly record: CommandRecord;
  readonly created: boolean;
  /** Runs once, after the acknowledgement went out; `undefined` for a repeat. */
  readonly after: (() => void) | undefined;
}

/** Identity digest of a command's input (method plus params without the command id). */
export function commandInputDigest(method: string, input: unknown): string {
  return createHash("sha256").update(canonicalJson({ method, input }), "utf8").digest("hex");
}

/** The exact receipt text sent for a command, first time and every repeat. */
export function receiptText(record: CommandRecord): string {
  return canonicalJson(record.receipt);
}

/**
 * Accepts a command once. A repeat with the same input answers the stored
 * record unchanged; a repeat with other input fails `command_conflict`.
 * `afterCommit` becomes the `after` of a newly accepted command only.
 */
export function runCommand(
  deps: CommandDeps,
  actor: Actor,
  method: string,
  commandId: string,
  input: unknown,
  accept: () => Result<Receipt>,
  afterCommit?: (receipt: Receipt) => void,
): Result<Accepted> {
  const { principal, application } = actor;
  const inputDigest = commandInputDigest(method, input);
  let outcome: Result<{ record: CommandRecord; created: boolean }>;
  try {
    outcome = deps.store.transact(() => {
      const existing = deps.store.commands.get(principal, application, commandId);
      if (existing !== undefined) return ok({ record: existing, created: false });
      const accepted = accept();
      // Throwing unwinds the transaction, so a refused command leaves no writes.
      if (!accepted.ok) throw new ControllerFailure(accepted.error);
      const record: CommandRecord = { principal, application, commandId, method, inputDigest, receipt: accepted.value, createdAt: deps.clock.now() };
      const inserted = deps.store.commands.insert(record);
      if (!inserted.ok) throw new ControllerFailure(inserted.error);
      return ok({ record: inserted.value, created: true });
    });
  } catch (caught) {
    if (!(caught instanceof ControllerFailure)) throw caught;
    outcome = err(failureOf(caught));
  }
  if (!outcome.ok) return outcome;
  const { record, created } = outcome.value;
  if (record.method !== method || record.inputDigest !== inputDigest) return err(controllerError("command_conflict"));
  const after = created && afterCommit !== undefined ? () => afterCommit(record.receipt) : undefined;
  return ok({ record, created, after });
}

/** Records the command's receipt; an operation calls it inside its own transaction, as its last write. */
export type RecordReceipt = (result: Receipt) => void;

/**
 * Accepts a command whose operation commits its own writes and runs its
 * effects (a provider cancel, an answer to the agent) only after that commit.
 * The operation calls `record` inside its transaction, so the receipt commits
 * with the change and never without it; an operation that changed nothing
 * durable (e.g. cancelling a settled turn) gets its receipt recorded alone.
 * The receipt is `{commandId, ...result}`; repeats and conflicts as runCommand.
 */
export function runOperation(
  deps: CommandDeps,
  actor: Actor,
  method: string,
  commandId: string,
  input: unknown,
  operate: (record: RecordReceipt) => Result<Receipt>,
): Result<Accepted> {
  const { principal, application } = actor;
  const inputDigest = commandInputDigest(method, input);
  const existing = deps.store.commands.get(principal, application, commandId);
  if (existing !== undefined) {
    if (existing.method !== method || existing.inputDigest !== inputDigest) return err(controllerError("command_conflict"));
    return ok({ record: existing, created: false, after: undefined });
  }
  const box: { recorded?: CommandRecord } = {};
  const record: RecordReceipt = (result) => {
    if (box.recorded !== undefined) throw new Error("command recorded twice");
    const inserted = deps.store.commands.insert({ principal, application, commandId, method, inputDigest, receipt: { commandId, ...result }, createdAt: deps.clock.now() });
    if (!inserted.ok) throw new ControllerFailure(inserted.error);
    box.recorded = inserted.value;
  };
  try {
    const result = operate(record);
    if (!result.ok) return result;
    if (box.recorded === undefined) deps.store.transact(() => record(result.value));
  } catch (caught) {
    if (!(caught instanceof ControllerFailure)) throw caught;
    return err(failureOf(caught));
  }
  if (box.recorded === undefined) throw new Error("command not recorded");
  return ok({ record: box.recorded, created: true, after: undefined });
}

/** commands.get: the stored record of one of the actor's commands, or `not_found`. */
export function commandRecord(deps: CommandDeps, actor: Actor, commandId: string): Result<CommandRecord> {
  const record = deps.store.commands.get(actor.principal, actor.application, commandId);
  return record === undefined ? err(controllerError("not_found")) : ok(record);
}
