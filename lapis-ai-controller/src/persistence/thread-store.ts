// Accessor of the `threads` table.

import { controllerError, err, ok, type Result } from "../domain/errors.ts";
import type { ThreadStore } from "../domain/ports.ts";
import type { ThreadRecord } from "../domain/records.ts";
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

/** The ThreadStore port over a store handle. */
export function threadStore(handle: StoreHandle): ThreadStore {
  const { db } = handle;
  const insert = db.prepare(`INSERT INTO threads (thread_id, principal, application, workspace_id, provider, retention,
    restricted, config_version, config, binding, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const select = db.prepare("SELECT * FROM threads WHERE thread_id = ?");
  const update = db.prepare("UPDATE threads SET config = ?, config_version = config_version + 1, updated_at = ? WHERE thread_id = ? AND config_version = ?");
  const get = (threadId: string): ThreadRecord | undefined => {
    const row = select.get(threadId) as Row | undefined;
    return row === undefined ? undefined : threadFromRow(row);
  };
  return {
    insert(thread): Result<ThreadRecord> {
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
        const changed = update.run(toJson(config), at, threadId, expectedVersion).changes;
        const current = get(threadId);
        if (current === undefined) return err(controllerError("not_found"));
        return Number(changed) === 1 ? ok(current) : err(controllerError("version_conflict"));
      });
    },
  };
}
