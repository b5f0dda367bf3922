// Accessor of the `provider_sessions` table: native session ids bound per
// thread and provider, apart from turn and command identities (P-ARC-19).

import { controllerError, err, ok, type Result } from "../domain/errors.ts";
import type { ProviderSessionStore } from "../domain/ports.ts";
import type { ProviderSessionRecord } from "../domain/records.ts";
import type { StoreHandle } from "./handle.ts";
import { allColumns } from "./nul-text.ts";
import { int, json, text, toJson, type Row } from "./rows.ts";

/** Maps a validated `provider_sessions` row to its record. */
export function providerSessionFromRow(row: Row): ProviderSessionRecord {
  return {
    threadId: text(row, "thread_id"),
    provider: text(row, "provider"),
    nativeSessionId: text(row, "native_session_id"),
    binding: json(row, "binding"),
    createdAt: int(row, "created_at"),
    updatedAt: int(row, "updated_at"),
  };
}

/** The ProviderSessionStore port over a store handle. */
export function providerSessionStore(handle: StoreHandle): ProviderSessionStore {
  const { db } = handle;
  const select = db.prepare(`SELECT ${allColumns(db, "provider_sessions")} FROM provider_sessions WHERE thread_id = ? AND provider = ?`);
  const upsert = db.prepare(`INSERT INTO provider_sessions (thread_id, provider, native_session_id, binding, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (thread_id, provider) DO UPDATE SET
    native_session_id = excluded.native_session_id, binding = excluded.binding, updated_at = excluded.updated_at`);
  const get = (threadId: string, provider: string): ProviderSessionRecord | undefined => {
    const row = select.get(threadId, provider) as Row | undefined;
    return row === undefined ? undefined : providerSessionFromRow(row);
  };
  return {
    get,
    bind(session): Result<ProviderSessionRecord> {
      try {
        upsert.run(session.threadId, session.provider, session.nativeSessionId, toJson(session.binding), session.createdAt, session.updatedAt);
        return ok(get(session.threadId, session.provider) as ProviderSessionRecord);
      } catch {
        return err(controllerError("storage_write_failed", { where: "provider_sessions" }));
      }
    },
  };
}
