// The engine side of the protocol's TurnPort: turns.submit records the turn
// inside the protocol's command transaction, and scheduling starts only after
// that commit, exactly once per newly accepted command.
import { controllerError, err, isErrorCode, ok, type ControllerError, type Result as CResult } from "./errors.ts";
import type { AccessContext, TurnPort, TurnSubmission } from "./protocol-ports.ts";
import type { Json, ThreadRecord } from "./records.ts";
import type { TurnService } from "./turn-service.ts";
import type { Result } from "./turn-result.ts";
import { isActive } from "./turn-state.ts";

/** A payload-free ControllerError for an engine refusal code. */
export function engineError(code: string): ControllerError {
  return controllerError(isErrorCode(code) ? code : "internal_error");
}

/** Converts an engine result to the protocol's Result shape. */
export function toOutcome<T>(r: Result<T>): CResult<T> {
  return r.ok ? ok(r.value) : err(engineError(r.code));
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

/** The TurnPort over a TurnService. */
export function engineTurnPort(service: TurnService): TurnPort {
  return {
    acceptSubmit(_access: AccessContext, thread: ThreadRecord, submission: TurnSubmission) {
      const text = submissionText(submission.input);
      if (text === null) return err(controllerError("invalid_params"));
      const mine = service.store.getThread(thread.threadId);
      if (!mine) return err(controllerError("not_found"));
      const r = service.commands.acceptTurn(mine, submission.commandId, null, text);
      return r.ok ? ok({ ...r.value }) : err(engineError(r.code));
    },
    afterCommit() {
      service.engine.schedule();
    },
    isBusy(threadId: string) {
      return service.store.listTurns({ threadId }).some((t) => isActive(t.state));
    },
  };
}
