// The TurnPort as the service hands it to the protocol: a submit is refused
// before anything is recorded (so before any agent work) while its thread is
// being deleted (`thread_busy`) or its application is over a quota
// (`quota_exceeded`, domain/token-usage.ts). A repeat of an accepted command
// never reaches this check: runCommand answers it from the stored receipt.
import { controllerError, err } from "./errors.ts";
import type { Clock } from "./ports.ts";
import type { TurnPort } from "./protocol-ports.ts";
import type { DeletionGuard } from "./thread-lifecycle.ts";
import { checkQuotas, type ApplicationSettings, type QuotaFacts } from "./token-usage.ts";

/** Wraps `inner` with the deletion guard and the quotas of each application. */
export function quotaTurnPort(inner: TurnPort, o: { guard: DeletionGuard; settings: ReadonlyMap<string, ApplicationSettings>; facts: QuotaFacts; clock: Clock }): TurnPort {
  return {
    acceptSubmit(actor, thread, submission) {
      if (o.guard.has(thread.threadId)) return err(controllerError("thread_busy", { retryable: true }));
      const quota = checkQuotas(o.settings.get(thread.application)?.quotas, o.facts, thread.application, o.clock.now());
      return quota.ok ? inner.acceptSubmit(actor, thread, submission) : quota;
    },
    afterCommit: (receipt) => inner.afterCommit(receipt),
    isBusy: (threadId) => inner.isBusy(threadId),
  };
}
