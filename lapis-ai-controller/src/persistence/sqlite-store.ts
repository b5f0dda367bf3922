// The durable store (plan 4.1 item 1): one SQLite file in WAL mode with
// synchronous=FULL, guarded by the exclusive instance lock, validated row by
// row before anything else may use it, and written only in short
// BEGIN IMMEDIATE transactions that never span an await.

import { closeSync, mkdirSync, openSync } from "node:fs";
import { dirname, isAbsolute } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { controllerError, ControllerFailure, err, ok, type Result } from "../domain/errors.ts";
import { systemClock, type Clock, type Store } from "../domain/ports.ts";
import type { RetentionProfile } from "../domain/records.ts";
import { auditStore } from "./audit.ts";
import { groupCommitLimits, transactor, type GroupCommitLimits } from "./group-commit.ts";
import { commandStore } from "./command-store.ts";
import type { StoreHandle } from "./handle.ts";
import { acquireInstanceLock, isInstanceLocked, type InstanceLock } from "./instance-lock.ts";
import { interactionStore } from "./interaction-store.ts";
import { journalStore } from "./journal-store.ts";
import { leaseStore } from "./lease-store.ts";
import { preparationMarkerStore } from "./preparation-markers.ts";
import { providerSessionStore } from "./provider-session-store.ts";
import { validateAllRecords } from "./record-validation.ts";
import { SCHEMA_V1, SCHEMA_VERSION } from "./schema.ts";
import { pageCacheKiB } from "./store-limits.ts";
import { threadStore } from "./thread-store.ts";
import { turnStore } from "./turn-store.ts";
import { VolatilePayloads, volatileLimits, type VolatileLimits } from "./volatile-payloads.ts";

/** How to open the store. */
export interface StoreOptions {
  /** Absolute path of the database file. */
  readonly path: string;
  /** Default retention profile for new threads (default `full`). */
  readonly retention?: RetentionProfile;
  readonly clock?: Clock;
  readonly volatile?: Partial<VolatileLimits>;
  /** Wait for the instance lock (default 250 ms, ceiling 5 s). */
  readonly lockWaitMs?: number;
  /** Group commit of queued writes (default 64 items per transaction, ceiling 1024; 1 = one commit per item). */
  readonly groupCommit?: Partial<GroupCommitLimits>;
  /** SQLite page cache of the connection in KiB (default 256, 64 … 65 536; P-STO-45). */
  readonly pageCacheKiB?: number;
}

/** Storage settings read live from SQLite (P-STO-01). */
export interface StoragePragmas {
  readonly journalMode: string;
  readonly synchronous: string;
  readonly foreignKeys: boolean;
  readonly schemaVersion: number;
}

/** The open store: the domain ports plus what diagnostics and other accessor files need. */
export interface SqliteStore extends Store {
  readonly path: string;
  /** For accessor factories of later issues (e.g. persistence/auth-store.ts). */
  readonly handle: StoreHandle;
  pragmas(): StoragePragmas;
}

const SYNCHRONOUS_NAMES = ["off", "normal", "full", "extra"];

/** Applies the connection settings every store connection uses. */
export function configureConnection(db: DatabaseSync, writable: boolean): void {
  if (writable) db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = FULL");
  db.exec("PRAGMA foreign_keys = ON");
}

/** Reads the storage pragmas of a connection, live. */
export function readPragmas(db: DatabaseSync): StoragePragmas {
  const journal = db.prepare("PRAGMA journal_mode").get() as { journal_mode: string };
  const sync = db.prepare("PRAGMA synchronous").get() as { synchronous: number };
  const fk = db.prepare("PRAGMA foreign_keys").get() as { foreign_keys: number };
  return {
    journalMode: String(journal.journal_mode).toLowerCase(),
    synchronous: SYNCHRONOUS_NAMES[Number(sync.synchronous)] ?? String(sync.synchronous),
    foreignKeys: Number(fk.foreign_keys) === 1,
    schemaVersion: readSchemaVersion(db) ?? 0,
  };
}

/** The stored schema version, or undefined when the database has no version table. */
export function readSchemaVersion(db: DatabaseSync): number | undefined {
  const table = db.prepare("SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'").get();
  if (table === undefined) return undefined;
  const row = db.prepare("SELECT version FROM schema_version WHERE singleton = 1").get() as { version?: unknown } | undefined;
  return typeof row?.version === "number" || typeof row?.version === "bigint" ? Number(row.version) : Number.NaN;
}

/** Creates schema v1 on an empty database, or checks the stored version. */
function ensureSchema(db: DatabaseSync, transact: <T>(work: () => T) => T): Result<void> {
  const version = readSchemaVersion(db);
  if (version === undefined) {
    const other = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").get() as { n: number };
    if (Number(other.n) > 0) return err(controllerError("storage_version_unsupported"));
    transact(() => {
      for (const statement of SCHEMA_V1) db.exec(statement);
    });
    return ok(undefined);
  }
  return version === SCHEMA_VERSION ? ok(undefined) : err(controllerError("storage_version_unsupported"));
}

/**
 * Opens the store: takes the instance lock, applies WAL + FULL, creates or
 * checks schema v1, then validates every retained row (P-STO-05/06). Any
 * failure closes everything and answers a payload-free code.
 */
export function openSqliteStore(options: StoreOptions): Result<SqliteStore> {
  if (!isAbsolute(options.path)) return err(controllerError("config_invalid", { where: "database" }));
  const limits = volatileLimits(options.volatile);
  if (!limits.ok) return limits;
  const group = groupCommitLimits(options.groupCommit);
  if (!group.ok) return err(controllerError("config_invalid", { where: group.where }));
  const cacheKiB = pageCacheKiB(options.pageCacheKiB);
  if (cacheKiB === null) return err(controllerError("config_invalid", { where: "storage.pageCacheKiB" }));
  try {
    mkdirSync(dirname(options.path), { recursive: true, mode: 0o700 });
  } catch {
    return err(controllerError("storage_unavailable", { where: "database_directory" }));
  }
  const lock = acquireInstanceLock(options.path, options.lockWaitMs);
  if (!lock.ok) return lock;
  let db: DatabaseSync | undefined;
  try {
    // Created owner-only before SQLite opens it; SQLite gives -wal and -shm the same mode.
    closeSync(openSync(options.path, "a", 0o600));
    db = new DatabaseSync(options.path, { timeout: 1_000 });
    configureConnection(db, true);
    db.exec(`PRAGMA cache_size = -${cacheKiB}`);
    const runner = transactor(db, group.value);
    const transact = runner.transact;
    const schema = ensureSchema(db, transact);
    if (!schema.ok) return fail(db, lock.value, schema.error);
    const valid = validateAllRecords(db);
    if (!valid.ok) return fail(db, lock.value, valid.error);
    const retention = options.retention ?? "full";
    const handle: StoreHandle = {
      db,
      clock: options.clock ?? systemClock,
      retention,
      volatile: new VolatilePayloads(limits.value),
      transact,
      group: runner.group,
      flush: runner.flush,
      pending: () => runner.pending,
    };
    return ok(assemble(options.path, handle, lock.value));
  } catch (caught) {
    const failure = caught instanceof ControllerFailure ? caught.failure : controllerError("storage_unavailable");
    return fail(db, lock.value, failure);
  }
}

function fail(db: DatabaseSync | undefined, lock: InstanceLock, error: ReturnType<typeof controllerError>): Result<never> {
  try {
    if (db?.isOpen) db.close();
  } finally {
    lock.release();
  }
  return err(error);
}

/** A value made at its first use and kept. */
function once<T>(make: () => T): () => T {
  let made: { readonly value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

/**
 * The store over a validated handle. Each accessor prepares its statements
 * (about 30 in all) when it is first used rather than at open: preparing
 * them is no part of startup validation, and a process that opens the store
 * for a few tables (the CLI) never pays for the rest.
 */
function assemble(path: string, handle: StoreHandle, lock: InstanceLock): SqliteStore {
  let closed = false;
  const threads = once(() => threadStore(handle));
  const turns = once(() => turnStore(handle));
  const commands = once(() => commandStore(handle));
  const journal = once(() => journalStore(handle));
  const interactions = once(() => interactionStore(handle));
  const leases = once(() => leaseStore(handle));
  const providerSessions = once(() => providerSessionStore(handle));
  const audit = once(() => auditStore(handle));
  const preparationMarkers = once(() => preparationMarkerStore(handle));
  return {
    path,
    handle,
    retention: handle.retention,
    transact: handle.transact,
    get threads() { return threads(); },
    get turns() { return turns(); },
    get commands() { return commands(); },
    get journal() { return journal(); },
    get interactions() { return interactions(); },
    get leases() { return leases(); },
    get providerSessions() { return providerSessions(); },
    get audit() { return audit(); },
    get preparationMarkers() { return preparationMarkers(); },
    pragmas: () => readPragmas(handle.db),
    close(): void {
      if (closed) return;
      closed = true;
      try {
        // What is queued was never acknowledged; committing it on an orderly close keeps it anyway.
        try { handle.flush(); } catch { /* the database is failing: close regardless */ }
        handle.volatile.clear();
        handle.db.close();
      } finally {
        lock.release();
      }
    },
  };
}

/** What `status` may learn without taking the lock: live pragmas of a read-only connection and whether a service holds the lock. */
export interface StorageDiagnostics extends StoragePragmas {
  readonly exists: boolean;
  readonly locked: boolean;
}

/** Reads storage diagnostics read-only; never writes the database, never prints row content. */
export function readStorageDiagnostics(path: string): Result<StorageDiagnostics> {
  if (!isAbsolute(path)) return err(controllerError("config_invalid", { where: "database" }));
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(path, { readOnly: true, timeout: 1_000 });
    configureConnection(db, false);
    return ok({ ...readPragmas(db), exists: true, locked: isInstanceLocked(path) });
  } catch {
    return err(controllerError("storage_unavailable"));
  } finally {
    if (db?.isOpen) db.close();
  }
}
