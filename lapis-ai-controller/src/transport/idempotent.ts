// Translates an accepted command (domain/commands.ts) into the reply frame:
// the stored receipt's exact bytes, first time and every repeat (P-API-07),
// and the after-commit work run once the acknowledgement went out.
import { receiptText, type Accepted } from "../domain/commands.ts";
import type { Result } from "../domain/errors.ts";
import type { Outcome } from "../domain/protocol-ports.ts";
import type { ProtocolDeps, Reply } from "./context.ts";

/** The reply of a command outcome, with its payload-free log line. */
export function commandReply(deps: ProtocolDeps, method: string, accepted: Result<Accepted>): Outcome<Reply> {
  if (!accepted.ok) {
    if (accepted.error.code === "command_conflict") deps.log("command.conflict", { method });
    return accepted;
  }
  deps.log("command.accepted", { method, created: accepted.value.created });
  return { ok: true, value: { raw: receiptText(accepted.value.record), after: accepted.value.after } };
}
