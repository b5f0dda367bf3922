// The TurnPort as the service hands it to the protocol: a submit (and, through
// turnGate, a continue) is refused
// before anything is recorded (so before any agent work) while its thread is
// being deleted (`thread_busy`) or its application is over a quota
// (`quota_exceeded`, domain/token-usage.ts). A repeat of an accepted command
// never reaches this check: runCommand answers it from the stored receipt.
import { controllerError, err, type Result } from "./errors.ts";
import type { Clock } from "./ports.ts";
import type { TurnPort } from "./protocol-ports.ts";
import type { DeletionGuard } from "./thread-lifecycle.ts";
import { checkQuotas, type ApplicationSettings, type QuotaFacts } from "./token-usage.ts";

/** What the gate reads. */
export interface GateDeps { readonly guard: DeletionGuard; readonly settings: ReadonlyMap<string, ApplicationSettings>; readonly facts: QuotaFacts; readonly clock: Clock }

/** The check before a new turn of a thread (submit or continue): not under deletion, the application within its quotas. */
export function turnGate(o: GateDeps): (thread: { threadId: string; application: string }) => Result<void> {
  return (thread) => {
    if (o.guard.has(thread.threadId)) return err(controllerError("thread_busy", { retryable: true }));
    return checkQuotas(o.settings.get(thread.application)?.quotas, o.facts, thread.application, o.clock.now());
  };
}

/** Wraps `inner` with the deletion guard and the quotas of each application. */
export function quotaTurnPort(inner: TurnPort, o: GateDeps): TurnPort {
  const gate = turnGate(o);
  return {
    acceptSubmit(actor, thread, submission) {
      const open = gate(thread);
      return open.ok ? inner.acceptSubmit(actor, thread, submission) : open;
    },
    afterCommit: (receipt) => inner.afterCommit(receipt),
    isBusy: (threadId) => inner.isBusy(threadId),
    prefetch: (submission) => inner.prefetch?.(submission),
  };
}
