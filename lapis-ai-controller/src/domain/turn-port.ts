// The engine side of the protocol's TurnPort: turns.submit records the turn
// inside the command transaction (domain/turn-commands.ts submitTurn), and
// scheduling starts only after that commit, exactly once per newly accepted
// command.
import { controllerError, err, ok } from "./errors.ts";
import type { TurnPort } from "./protocol-ports.ts";
import { submissionText } from "./turn-commands.ts";
import type { TurnService } from "./turn-service.ts";
import { engineError } from "./turn-result.ts";
import { isActive } from "./turn-state.ts";

/** The TurnPort over a TurnService. */
export function engineTurnPort(service: TurnService): TurnPort {
  return {
    acceptSubmit(_actor, thread, submission) {
      const text = submissionText(submission.input);
      if (text === null) return err(controllerError("invalid_params"));
      const mine = service.store.getThread(thread.threadId);
      if (!mine) return err(controllerError("not_found"));
      const r = service.commands.acceptTurn(mine, submission.commandId, null, text, submission.sourceRef);
      if (!r.ok) return err(engineError(r.code));
      // A free workspace: the turn enters preparing in the receipt's own commit.
      service.engine.claim(r.value.turnId);
      return ok({ ...r.value });
    },
    afterCommit() {
      service.engine.schedule();
    },
    prefetch(submission) {
      const text = submissionText(submission.input as Parameters<typeof submissionText>[0]);
      service.store.prefetch?.([...(text === null ? [] : [text]), submission.commandId, ...(submission.sourceRef === undefined ? [] : [submission.sourceRef])]);
    },
    isBusy(threadId: string) {
      return service.store.listTurns({ threadId }).some((t) => isActive(t.state));
    },
  };
}
