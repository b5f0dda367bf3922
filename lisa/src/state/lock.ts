import { closeSync, openSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { err, ok, type Result, StateStoreError } from "../errors.ts";
import { STATE_ERROR_CODES, sqlitePrimaryCode, toStateError } from "./errors.ts";

const SQLITE_BUSY = 5;

/** The single-instance lock of one state database; released by `release` or by process death. */
export interface InstanceLock {
  readonly path: string;
  release(): void;
}

/** The sibling lock file of a state database. */
export function lockPathFor(databasePath: string): string {
  return `${databasePath}.lock`;
}

/** Creates `path` with owner-only permissions if it does not exist (content stays private). */
export function ensurePrivateFile(path: string): void {
  closeSync(openSync(path, "a", 0o600));
}

/**
 * Takes the run lock of `databasePath`: the sibling `<db>.lock` is opened as a
 * SQLite database in exclusive locking mode with a write transaction held
 * until release. SQLite's POSIX locks vanish with the process (even SIGKILL),
 * and a second holder, in this or another process, fails at once.
 */
export function acquireInstanceLock(databasePath: string): Result<InstanceLock, StateStoreError> {
  const path = lockPathFor(databasePath);
  let db: DatabaseSync | undefined;
  try {
    ensurePrivateFile(path);
    db = new DatabaseSync(path, { timeout: 0 });
    db.exec("PRAGMA locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
  } catch (error) {
    db?.close();
    if (sqlitePrimaryCode(error) === SQLITE_BUSY) {
      return err(new StateStoreError(
        STATE_ERROR_CODES.locked,
        "another Lisa process is running with this state database (its lock file is held); stop it first",
        { cause: error },
      ));
    }
    return err(toStateError(error, "lock"));
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
