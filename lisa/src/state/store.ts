import { existsSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { err, ok, type Result, StateStoreError } from "../errors.ts";
import { LedgerConnection } from "./connection.ts";
import { STATE_ERROR_CODES, toStateError } from "./errors.ts";
import { acquireInstanceLock, ensurePrivateFile, type InstanceLock } from "./lock.ts";
import { applyMigrations, LATEST_SCHEMA_VERSION, readSchemaVersion } from "./migrations.ts";
import { SqliteStateStore } from "./sqlite-store.ts";
import type { OpenStateStoreOptions, StateStore } from "./types.ts";

export type { OpenStateStoreOptions, StateStore } from "./types.ts";
import { validateRows, validateSchema } from "./validate.ts";

/** Default wait for another connection's write lock. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5_000;

function schemaNewer(version: number): StateStoreError {
  return new StateStoreError(
    STATE_ERROR_CODES.schemaNewer,
    `state database schema version ${version} is newer than this Lisa supports (${LATEST_SCHEMA_VERSION}); upgrade Lisa`,
  );
}

// Fails closed on an unknown schema or any malformed row; null when sound.
function checkDatabase(db: DatabaseSync): StateStoreError | null {
  return validateSchema(db) ?? validateRows(db);
}

function openForRun(path: string, now: () => number, busyTimeoutMs: number, lock: InstanceLock): SqliteStateStore {
  ensurePrivateFile(path);
  const db = new DatabaseSync(path, { timeout: busyTimeoutMs, enableForeignKeyConstraints: true });
  try {
    const journal = db.prepare("PRAGMA journal_mode = WAL").get();
    if (journal?.["journal_mode"] !== "wal") throw toStateError(new Error("WAL unavailable"), "enable WAL");
    db.exec("PRAGMA synchronous = FULL");
    db.exec("PRAGMA foreign_keys = ON");
    // Content cleared from a finished row (a decrypted message among them, LISA-E2EE-04) is zeroed, not left in free space.
    db.exec("PRAGMA secure_delete = ON");
    const version = readSchemaVersion(db);
    if (version > LATEST_SCHEMA_VERSION) throw schemaNewer(version);
    applyMigrations(db, now());
    const problem = checkDatabase(db);
    if (problem !== null) throw problem;
  } catch (error) {
    db.close();
    throw error;
  }
  const conn = new LedgerConnection(db, { now, writable: true, lock });
  return new SqliteStateStore(conn, "run", { databaseExists: true, schemaVersion: LATEST_SCHEMA_VERSION });
}

// An empty in-memory ledger stands in for a database that does not exist
// yet, so `lisa status` reports "nothing yet" without creating any file.
function emptyLedger(now: () => number): SqliteStateStore {
  const db = new DatabaseSync(":memory:");
  applyMigrations(db, now());
  db.exec("PRAGMA query_only = ON");
  const conn = new LedgerConnection(db, { now, writable: false, lock: null });
  return new SqliteStateStore(conn, "readonly", { databaseExists: false, schemaVersion: 0 });
}

function openReadonly(path: string, now: () => number, busyTimeoutMs: number): SqliteStateStore {
  if (!existsSync(path)) return emptyLedger(now);
  const db = new DatabaseSync(path, { readOnly: true, timeout: busyTimeoutMs });
  let version: number;
  try {
    db.exec("PRAGMA query_only = ON");
    version = readSchemaVersion(db);
    if (version > LATEST_SCHEMA_VERSION) throw schemaNewer(version);
    if (version === 0) {
      db.close();
      return emptyLedger(now);
    }
    if (version < LATEST_SCHEMA_VERSION) {
      throw new StateStoreError(
        STATE_ERROR_CODES.schemaOutdated,
        `state database schema version ${version} predates this Lisa (${LATEST_SCHEMA_VERSION}); start the service once to migrate it`,
      );
    }
    const problem = checkDatabase(db);
    if (problem !== null) throw problem;
  } catch (error) {
    if (db.isOpen) db.close();
    throw error;
  }
  const conn = new LedgerConnection(db, { now, writable: false, lock: null });
  return new SqliteStateStore(conn, "readonly", { databaseExists: true, schemaVersion: version });
}

/**
 * Opens the state database. `run` takes the single-instance lock (code
 * `state_locked` if another process holds it), enables WAL and
 * synchronous=FULL, migrates, then validates the schema and every row.
 * `readonly` never locks or writes. Either fails closed with
 * `state_schema_newer` or `state_corrupt` before any other work.
 */
export function openStateStore(path: string, options: OpenStateStoreOptions): Result<StateStore, StateStoreError> {
  const now = options.now ?? Date.now;
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  if (path.length === 0 || path === ":memory:") {
    return err(new StateStoreError(STATE_ERROR_CODES.openFailed, "state database path must name a file"));
  }
  if (options.mode === "readonly") {
    try {
      return ok(openReadonly(path, now, busyTimeoutMs));
    } catch (error) {
      return err(toStateError(error, "open"));
    }
  }
  const lock = acquireInstanceLock(path);
  if (!lock.ok) return lock;
  try {
    return ok(openForRun(path, now, busyTimeoutMs, lock.value));
  } catch (error) {
    lock.value.release();
    return err(toStateError(error, "open"));
  }
}
