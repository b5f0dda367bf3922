// The exclusive service instance lock (P-STO-02, P-ARC-09): a sibling
// `<db>.lock` SQLite file held in exclusive locking mode with an open write
// transaction. SQLite's POSIX locks die with the process, SIGKILL included,
// and they are honoured the same by Node's and Deno's node:sqlite. Its journal
// is kept in memory, so holding and releasing it touch no other file.

import { closeSync, existsSync, openSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { controllerError, err, ok, type Result } from "../domain/errors.ts";
import { primaryCode, SQLITE_BUSY, SQLITE_LOCKED } from "./rows.ts";

/** Limits of the lock wait: a short busy wait rides over a diagnostic probe, never over a live holder. */
export const LOCK_WAIT_DEFAULT_MS = 250;
/** The hard ceiling of the lock wait. */
export const LOCK_WAIT_MAX_MS = 5_000;

/** A held instance lock; released by `release` or by process death. */
export interface InstanceLock {
  readonly path: string;
  release(): void;
}

/** The sibling lock file of a database. */
export function lockPathFor(databasePath: string): string {
  return `${databasePath}.lock`;
}

function clampWait(waitMs: number | undefined): number {
  if (waitMs === undefined || !Number.isFinite(waitMs) || waitMs < 0) return LOCK_WAIT_DEFAULT_MS;
  return Math.min(Math.floor(waitMs), LOCK_WAIT_MAX_MS);
}

/** Takes the instance lock of `databasePath`; a live holder in any process gives `instance_locked`. */
export function acquireInstanceLock(databasePath: string, waitMs?: number): Result<InstanceLock> {
  const path = lockPathFor(databasePath);
  let db: DatabaseSync | undefined;
  try {
    closeSync(openSync(path, "a", 0o600));
    db = new DatabaseSync(path, { timeout: clampWait(waitMs) });
    // The journal in memory: the lock never writes a page, and a journal file would be created at BEGIN and
    // deleted with three fsyncs at release (2-7 ms each time serve stops or `status` probes).
    db.exec("PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = MEMORY");
    db.exec("BEGIN EXCLUSIVE");
  } catch (error) {
    try {
      db?.close();
    } catch {
      // closing a half-open handle may fail; the lock was not taken either way
    }
    const code = primaryCode(error);
    if (code === SQLITE_BUSY || code === SQLITE_LOCKED) return err(controllerError("instance_locked"));
    return err(controllerError("storage_unavailable", { where: "instance_lock" }));
  }
  const held = db;
  let released = false;
  return ok({
    path,
    release(): void {
      if (released) return;
      released = true;
      held.close();
    },
  });
}

/** True when some process holds the lock right now (the probe takes it for an instant when free). */
export function isInstanceLocked(databasePath: string): boolean {
  if (!existsSync(lockPathFor(databasePath))) return false;
  const probe = acquireInstanceLock(databasePath, 0);
  if (probe.ok) {
    probe.value.release();
    return false;
  }
  return probe.error.code === "instance_locked";
}
