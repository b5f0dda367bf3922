// The store's transaction runner with group commit. Writes that may wait a
// moment (the agent's events, queued by `group`) are collected until the next
// macrotask and committed together in one `BEGIN IMMEDIATE` ... `COMMIT`, so a
// burst of chunks from one I/O read costs one `synchronous=FULL` commit, not
// one per chunk. Nothing queued is visible to a read or to a subscriber
// before its commit, and the order of the journal is the order of arrival:
//
// - every transaction (`transact`) takes what is queued into its own COMMIT,
//   ahead of its own writes, so a state change, a command receipt, an
//   interaction or an answer to the agent is never durable (or acknowledged)
//   before the events that came before it, and the two cost one
//   `synchronous=FULL` commit, not two; if its own work fails, the queue is
//   committed alone, as if it had gone first;
// - a queued item's `committed` callback (the subscribers' wake-up) runs only
//   after its COMMIT returned;
// - the queue is bounded: reaching `maxBatch` commits at once.
//
// Each item runs under its own SAVEPOINT: an item refused with a
// ControllerFailure (a row the journal rules refuse) is rolled back alone and
// dropped, as a single append would have failed; any other error rolls the
// whole batch back, keeps it queued in order (nothing after it can commit
// first) and is thrown to the caller that asked for the commit.
import type { DatabaseSync } from "node:sqlite";
import { setImmediate } from "node:timers";
import { ControllerFailure } from "../domain/errors.ts";

/** Group-commit limits: `maxBatch` 1 commits every item on its own (no grouping). */
export interface GroupCommitLimits {
  readonly maxBatch: number;
}

/** Default and ceiling of the batch size. */
export const GROUP_COMMIT_LIMITS = { maxBatch: 64, maxBatchCeiling: 1024 } as const;

/** The checked limits, or the name of the key that is out of range. */
export function groupCommitLimits(raw: { maxBatch?: unknown } = {}): { ok: true; value: GroupCommitLimits } | { ok: false; where: string } {
  const maxBatch = raw.maxBatch === undefined ? GROUP_COMMIT_LIMITS.maxBatch : raw.maxBatch;
  if (typeof maxBatch !== "number" || !Number.isInteger(maxBatch) || maxBatch < 1 || maxBatch > GROUP_COMMIT_LIMITS.maxBatchCeiling) return { ok: false, where: "storage.groupCommitMax" };
  return { ok: true, value: { maxBatch } };
}

type Item = { readonly work: () => void; readonly committed: () => void };

/** Transactions plus the group-commit queue over one connection. */
export interface Transactor {
  /** Runs `work` in one `BEGIN IMMEDIATE` transaction after committing the queue; nested calls join the outer one. */
  transact<T>(work: () => T): T;
  /** Queues `work` for the next group commit; `committed` runs after its COMMIT. Inside a transaction it joins that one. */
  group(work: () => void, committed: () => void): void;
  /** Commits the queue now (a no-op when it is empty). */
  flush(): void;
  /** Items queued and not yet committed. */
  readonly pending: number;
}

/** Builds the transactor; `schedule` runs the deferred flush (default: the next macrotask). */
export function transactor(db: DatabaseSync, limits: GroupCommitLimits = { maxBatch: GROUP_COMMIT_LIMITS.maxBatch }, schedule: (run: () => void) => void = (run) => void setImmediate(run)): Transactor {
  let depth = 0;
  let queue: Item[] = [];
  let scheduled = false;
  let afterOuter: Array<() => void> = [];
  // Prepared once: every queued item runs under its own savepoint, so these run twice per agent event.
  const savepoint = db.prepare("SAVEPOINT group_item");
  const release = db.prepare("RELEASE group_item");
  const rollbackTo = db.prepare("ROLLBACK TO group_item");

  const runAfter = (callbacks: ReadonlyArray<() => void>): void => {
    for (const callback of callbacks) {
      try {
        callback();
      } catch {
        // A listener's failure never undoes a commit or stops the others.
      }
    }
  };

  const begin = <T>(work: () => T): T => {
    db.exec("BEGIN IMMEDIATE");
    depth += 1;
    try {
      const result = work();
      if (result instanceof Promise) throw new Error("a store transaction body must be synchronous");
      db.exec("COMMIT");
      return result;
    } catch (error) {
      if (db.isTransaction) db.exec("ROLLBACK");
      throw error;
    } finally {
      depth -= 1;
    }
  };

  /** Writes the queued items inside the open transaction; returns their listeners. */
  const writeQueue = (batch: readonly Item[]): Array<() => void> => {
    const done: Array<() => void> = [];
    for (const item of batch) {
      savepoint.run();
      try {
        item.work();
        release.run();
        done.push(item.committed);
      } catch (error) {
        rollbackTo.run();
        release.run();
        if (!(error instanceof ControllerFailure)) throw error;
      }
    }
    return done;
  };

  const flush = (): void => {
    if (queue.length === 0 || depth > 0) return;
    const batch = queue;
    const done = begin(() => writeQueue(batch));
    // Committed: only now are the items gone from the queue and their listeners told
    // (nothing joins the queue during the batch: a `group` inside a transaction runs inline).
    queue = [];
    runAfter(done);
  };

  const transact = <T>(work: () => T): T => {
    if (depth > 0) return work();
    const batch = queue;
    let queued: Array<() => void> = [];
    let queueWritten = false;
    let result: T;
    try {
      // The queue first, then the work, in one COMMIT.
      result = begin(() => {
        queued = writeQueue(batch);
        queueWritten = true;
        return work();
      });
    } catch (error) {
      // Rolled back: the items that joined it never happened, so nobody is told.
      afterOuter = [];
      // The work failed, not the queue: the queue commits alone, as it would have before the work.
      if (queueWritten && batch.length > 0) {
        try {
          flush();
        } catch {
          // Still queued in order; the next transaction or flush meets that error itself.
        }
      }
      throw error;
    }
    if (batch.length > 0) queue = [];
    const after = afterOuter;
    afterOuter = [];
    runAfter(queued);
    runAfter(after);
    return result;
  };

  return {
    transact,
    group(work, committed): void {
      if (depth > 0) {
        // Inside a transaction: the item is part of it and its listeners wait for that commit.
        work();
        afterOuter.push(committed);
        return;
      }
      queue.push({ work, committed });
      if (queue.length >= limits.maxBatch) {
        flush();
        return;
      }
      if (scheduled) return;
      scheduled = true;
      schedule(() => {
        scheduled = false;
        try {
          flush();
        } catch {
          // The batch stays queued in order; the next transaction or flush retries it and meets the error itself.
        }
      });
    },
    flush,
    get pending(): number {
      return queue.length;
    },
  };
}
