// Idempotent mutations: one command identity, one receipt, byte for byte
// (P-API-07). The command row and the command's own writes commit in one
// transaction; a repeat never runs `accept` again.
import { createHash } from "node:crypto";
import { canonicalJson } from "../domain/canonical-json.ts";
import type { Result } from "../domain/errors.ts";
import { ControllerFailure, err, failureOf, ok } from "../domain/errors.ts";
import type { AccessContext, Outcome } from "../domain/protocol-ports.ts";
import { fail } from "../domain/protocol-ports.ts";
import type { CommandRecord, JournalMetadata } from "../domain/records.ts";
import type { ProtocolDeps, Reply } from "./context.ts";

/** A receipt: short scalar facts only, never a payload (P-STO-10). */
export type Receipt = JournalMetadata;

/** Identity digest of a command's input (method plus params without the command id). */
export function commandInputDigest(method: string, input: unknown): string {
  return createHash("sha256").update(canonicalJson({ method, input }), "utf8").digest("hex");
}

/** The exact receipt text sent for a command, first time and every repeat. */
export function receiptText(record: CommandRecord): string {
  return canonicalJson(record.receipt);
}

/**
 * Accepts a command once. A repeat with the same input returns the stored
 * receipt unchanged; a repeat with other input fails `command_conflict`.
 * `afterCommit` runs only for a newly accepted command, after its commit.
 */
export function runCommand(
  deps: ProtocolDeps,
  access: AccessContext,
  method: string,
  commandId: string,
  input: unknown,
  accept: () => Result<Receipt>,
  afterCommit?: (receipt: Receipt) => void,
): Outcome<Reply> {
  const { principal, application } = access;
  const inputDigest = commandInputDigest(method, input);
  let outcome: Result<{ record: CommandRecord; created: boolean }>;
  try {
    outcome = deps.store.transact(() => {
      const existing = deps.store.commands.get(principal, application, commandId);
      if (existing !== undefined) return ok({ record: existing, created: false });
      const accepted = accept();
      // Throwing unwinds the transaction, so a refused command leaves no writes.
      if (!accepted.ok) throw new ControllerFailure(accepted.error);
      const record: CommandRecord = {
        principal,
        application,
        commandId,
        method,
        inputDigest,
        receipt: accepted.value,
        createdAt: deps.clock.now(),
      };
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
  if (record.method !== method || record.inputDigest !== inputDigest) {
    deps.log("command.conflict", { method });
    return fail("command_conflict");
  }
  deps.log("command.accepted", { method, created });
  const after = created && afterCommit !== undefined ? () => afterCommit(record.receipt) : undefined;
  return ok({ raw: receiptText(record), after });
}
