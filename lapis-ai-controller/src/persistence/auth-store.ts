// Accessor of the `auth_sessions` table (AIC-API-003). Only the digest of a
// session bearer is stored; bootstrap tokens are never stored at all.

import { controllerError, err, ok, type Result } from "../domain/errors.ts";
import type { AuthSessionStore } from "../domain/protocol-ports.ts";
import type { AuthSessionRecord } from "../domain/records.ts";
import type { StoreHandle } from "./handle.ts";
import { int, intOrNull, json, text, textOrNull, toJson, type Row } from "./rows.ts";

/** Maps a validated `auth_sessions` row to its record. */
export function authSessionFromRow(row: Row): AuthSessionRecord {
  return {
    authSessionId: text(row, "auth_session_id"),
    credentialId: text(row, "credential_id"),
    principal: text(row, "principal"),
    application: text(row, "application"),
    scopes: json<string[]>(row, "scopes"),
    bearerDigest: textOrNull(row, "bearer_digest"),
    createdAt: int(row, "created_at"),
    expiresAt: int(row, "expires_at"),
    revokedAt: intOrNull(row, "revoked_at"),
  };
}

/** The AuthSessionStore port over a store handle. */
export function authSessionStore(handle: StoreHandle): AuthSessionStore {
  const { db } = handle;
  const insert = db.prepare(`INSERT INTO auth_sessions
    (auth_session_id, credential_id, principal, application, scopes, bearer_digest, created_at, expires_at, revoked_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const byCredential = db.prepare("SELECT * FROM auth_sessions WHERE credential_id = ? AND revoked_at IS NULL");
  const byDigest = db.prepare("SELECT * FROM auth_sessions WHERE bearer_digest = ?");
  const byId = db.prepare("SELECT * FROM auth_sessions WHERE auth_session_id = ?");
  const revoke = db.prepare("UPDATE auth_sessions SET revoked_at = ? WHERE auth_session_id = ? AND revoked_at IS NULL");
  const one = (row: unknown): AuthSessionRecord | undefined => row === undefined ? undefined : authSessionFromRow(row as Row);
  return {
    findUnrevokedByCredential: (credentialId) => one(byCredential.get(credentialId)),
    findByBearerDigest: (digest) => one(byDigest.get(digest)),
    get: (authSessionId) => one(byId.get(authSessionId)),
    insert(record): Result<AuthSessionRecord> {
      try {
        handle.transact(() => insert.run(record.authSessionId, record.credentialId, record.principal, record.application,
          toJson([...record.scopes]), record.bearerDigest, record.createdAt, record.expiresAt, record.revokedAt));
        return ok(record);
      } catch {
        return err(controllerError("storage_write_failed", { where: "auth_sessions" }));
      }
    },
    revoke(authSessionId, at): boolean {
      return handle.transact(() => Number(revoke.run(at, authSessionId).changes) === 1);
    },
  };
}
