// A stand-in for the issue-14 turn engine, for protocol tests only: it
// accepts submissions by recording them (a journal event, a counter) and
// never executes anything. It is not shipped and never described as the engine.
import { ok } from "../../src/domain/errors.ts";
import type { JournalStore } from "../../src/domain/ports.ts";
import type { TurnPort } from "../../src/domain/protocol-ports.ts";

/** The fake and what it observed. */
export interface FakeTurnPort extends TurnPort {
  readonly accepted: string[];
  readonly started: string[];
  busy: boolean;
  /** Runs inside acceptSubmit, before it returns (fault injection, e.g. cutting the socket). */
  onAccept: (() => void) | null;
}

/** Creates the fake over the real journal so accepted turns appear as events. */
export function fakeTurnPort(journal: () => JournalStore): FakeTurnPort {
  const port: FakeTurnPort = {
    accepted: [],
    started: [],
    busy: false,
    onAccept: null,
    acceptSubmit(_access, thread, submission) {
      port.accepted.push(submission.commandId);
      const turnId = `turn-${port.accepted.length}`;
      const appended = journal().append({
        threadId: thread.threadId,
        turnId: null,
        visibility: "transcript",
        kind: "turn_accepted",
        metadata: { turnId },
        createdAt: 0,
      });
      if (!appended.ok) return appended;
      port.onAccept?.();
      return ok({ commandId: submission.commandId, threadId: thread.threadId, turnId });
    },
    afterCommit(receipt) {
      port.started.push(String(receipt.turnId));
    },
    isBusy: () => port.busy,
  };
  return port;
}
