// Accessor of the `threads` table.

import { controllerError, err, ok, type Result } from "../domain/errors.ts";
import type { ThreadStore } from "../domain/ports.ts";
import type { ThreadRecord } from "../domain/records.ts";
import type { DatabaseSync } from "node:sqlite";
import type { StoreHandle } from "./handle.ts";
import { int, json, primaryCode, SQLITE_CONSTRAINT, text, toJson, type Row } from "./rows.ts";

/** Maps a validated `threads` row to its record. */
export function threadFromRow(row: Row): ThreadRecord {
  return {
    threadId: text(row, "thread_id"),
    principal: text(row, "principal"),
    application: text(row, "application"),
    workspaceId: text(row, "workspace_id"),
    provider: text(row, "provider"),
    retention: text(row, "retention") as ThreadRecord["retention"],
    restricted: int(row, "restricted") === 1,
    configVersion: int(row, "config_version"),
    config: json(row, "config"),
    binding: json(row, "binding"),
    createdAt: int(row, "created_at"),
    updatedAt: int(row, "updated_at"),
  };
}

/** Most thread rows kept decoded; the least recently read leaves a full cache. */
export const THREAD_ROWS_CACHED = 256;

type RowCache = Map<string, ThreadRecord>;
const caches = new WeakMap<DatabaseSync, RowCache>();

function cacheOf(db: DatabaseSync): RowCache {
  let cache = caches.get(db);
  if (cache === undefined) {
    cache = new Map();
    caches.set(db, cache);
  }
  return cache;
}

/** Drops a thread's decoded row; every writer of the `threads` table calls it for the row it changes. */
export function forgetThreadRow(handle: StoreHandle, threadId: string): void {
  caches.get(handle.db)?.delete(threadId);
}

/**
 * A thread's decoded row if kept (as last committed), without reading: the journal
 * takes a row's retention from it (P-PRF-16), which no write changes after the insert.
 */
export function keptThreadRow(handle: StoreHandle, threadId: string): ThreadRecord | undefined {
  return caches.get(handle.db)?.get(threadId);
}

function frozen<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) frozen(v);
    Object.freeze(value);
  }
  return value;
}

/**
 * The ThreadStore port over a store handle. A turn reads its thread's row many
 * times (access checks, the subscription pumps, preparation) and the row
 * changes only through this accessor or the thread's erasure, so decoded rows
 * are kept (frozen), as last committed: a row is cached only when read outside
 * a transaction, and every write drops its row first, so an uncommitted or
 * rolled-back value is never kept.
 */
export function threadStore(handle: StoreHandle): ThreadStore {
  const { db } = handle;
  const insert = db.prepare(`INSERT INTO threads (thread_id, principal, application, workspace_id, provider, retention,
    restricted, config_version, config, binding, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const select = db.prepare("SELECT * FROM threads WHERE thread_id = ?");
  const update = db.prepare("UPDATE threads SET config = ?, config_version = config_version + 1, updated_at = ? WHERE thread_id = ? AND config_version = ?");
  const cache = cacheOf(db);
  const get = (threadId: string): ThreadRecord | undefined => {
    const kept = cache.get(threadId);
    if (kept !== undefined) {
      cache.delete(threadId);
      cache.set(threadId, kept);
      return kept;
    }
    const row = select.get(threadId) as Row | undefined;
    if (row === undefined) return undefined;
    const thread = frozen(threadFromRow(row));
    if (!db.isTransaction) {
      if (cache.size >= THREAD_ROWS_CACHED) cache.delete(cache.keys().next().value as string);
      cache.set(threadId, thread);
    }
    return thread;
  };
  return {
    insert(thread): Result<ThreadRecord> {
      cache.delete(thread.threadId);
      try {
        insert.run(thread.threadId, thread.principal, thread.application, thread.workspaceId, thread.provider, thread.retention,
          thread.restricted ? 1 : 0, thread.configVersion, toJson(thread.config), toJson(thread.binding), thread.createdAt, thread.updatedAt);
        return ok(thread);
      } catch (error) {
        return err(controllerError(primaryCode(error) === SQLITE_CONSTRAINT ? "command_conflict" : "storage_write_failed", { where: "threads" }));
      }
    },
    get,
    updateConfig(threadId, expectedVersion, config, at): Result<ThreadRecord> {
      return handle.transact(() => {
        cache.delete(threadId);
        const changed = update.run(toJson(config), at, threadId, expectedVersion).changes;
        const current = get(threadId);
        if (current === undefined) return err(controllerError("not_found"));
        return Number(changed) === 1 ? ok(current) : err(controllerError("version_conflict"));
      });
    },
  };
}
