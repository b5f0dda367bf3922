// Retention by age per application (config `applications.<id>.deleteAfterDays`,
// default off): threads with no activity for that long are deleted exactly as
// threads.delete deletes them (agent files, secure delete, checkpoint, an
// audit row by `retention`). A thread with an active or fenced turn is left
// for a later sweep; a failure is logged as a code and the sweep goes on.
import { deleteThread, type DeleteDeps, type DeletionGuard } from "./thread-lifecycle.ts";
import type { ApplicationSettings } from "./token-usage.ts";

/** Sweep cadence and the most threads deleted per application per sweep. */
export const RETENTION_SWEEP = { intervalMs: 3_600_000, perApplication: 100 } as const;
const DAY_MS = 86_400_000;

/** One sweep over every application with an age limit; the number of threads deleted. */
export async function sweepRetention(deps: DeleteDeps, guard: DeletionGuard, settings: ReadonlyMap<string, ApplicationSettings>, log: (code: string) => void): Promise<number> {
  let deleted = 0;
  for (const [application, s] of settings) {
    if (s.deleteAfterDays === null) continue;
    const before = deps.clock.now() - s.deleteAfterDays * DAY_MS;
    for (const t of deps.store.idleThreads(application, before, RETENTION_SWEEP.perApplication)) {
      const owner = { principal: t.principal, application };
      const r = await deleteThread(deps, guard, owner, { commandId: `retention:${t.threadId}`, threadId: t.threadId, cancelActive: false, owner, by: "retention" }, true);
      if (r.ok) deleted += 1;
      else log(r.error.code);
    }
  }
  return deleted;
}

/** Runs the sweep now and then every interval until stopped; nothing when no application has an age limit. */
export function startRetention(deps: DeleteDeps, guard: DeletionGuard, settings: ReadonlyMap<string, ApplicationSettings>, log: (code: string) => void, intervalMs: number = RETENTION_SWEEP.intervalMs): () => Promise<void> {
  if (![...settings.values()].some((s) => s.deleteAfterDays !== null)) return async () => {};
  let running: Promise<unknown> = Promise.resolve();
  const run = () => { running = running.then(() => sweepRetention(deps, guard, settings, log)).catch(() => log("internal_error")); };
  run();
  const timer = setInterval(run, Math.max(1_000, intervalMs));
  timer.unref?.();
  return async () => { clearInterval(timer); await running; };
}
