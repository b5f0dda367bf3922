// Accessor of the `workspace_leases` table: one holder per workspace
// identifier, across providers (P-ARC-17); a fence outlives restarts (P-TRN-04).

import { controllerError, err, ok, type Result } from "../domain/errors.ts";
import type { LeaseStore } from "../domain/ports.ts";
import type { LeaseKind, WorkspaceLeaseRecord } from "../domain/records.ts";
import type { StoreHandle } from "./handle.ts";
import { int, intOrNull, text, type Row } from "./rows.ts";

/** Maps a validated `workspace_leases` row to its record. */
export function leaseFromRow(row: Row): WorkspaceLeaseRecord {
  return {
    workspaceId: text(row, "workspace_id"),
    turnId: text(row, "turn_id"),
    kind: text(row, "kind") as LeaseKind,
    acquiredAt: int(row, "acquired_at"),
    confirmDeadlineAt: intOrNull(row, "confirm_deadline_at"),
  };
}

/** The LeaseStore port over a store handle. */
export function leaseStore(handle: StoreHandle): LeaseStore {
  const { db } = handle;
  const select = db.prepare("SELECT * FROM workspace_leases WHERE workspace_id = ?");
  const insert = db.prepare("INSERT INTO workspace_leases (workspace_id, turn_id, kind, acquired_at, confirm_deadline_at) VALUES (?, ?, ?, ?, ?)");
  const update = db.prepare("UPDATE workspace_leases SET kind = ?, confirm_deadline_at = ? WHERE workspace_id = ? AND turn_id = ?");
  const remove = db.prepare("DELETE FROM workspace_leases WHERE workspace_id = ? AND turn_id = ?");
  const get = (workspaceId: string): WorkspaceLeaseRecord | undefined => {
    const row = select.get(workspaceId) as Row | undefined;
    return row === undefined ? undefined : leaseFromRow(row);
  };
  return {
    get,
    acquire(lease): Result<WorkspaceLeaseRecord> {
      return handle.transact(() => {
        const held = get(lease.workspaceId);
        if (held !== undefined) return err(controllerError(held.kind === "fence" ? "turn_fenced" : "turn_active", { retryable: held.kind === "lease" }));
        insert.run(lease.workspaceId, lease.turnId, lease.kind, lease.acquiredAt, lease.confirmDeadlineAt);
        return ok(lease);
      });
    },
    update(workspaceId, turnId, change): Result<WorkspaceLeaseRecord> {
      return handle.transact(() => {
        const changed = update.run(change.kind, change.confirmDeadlineAt, workspaceId, turnId).changes;
        return Number(changed) === 1 ? ok(get(workspaceId) as WorkspaceLeaseRecord) : err(controllerError("not_found"));
      });
    },
    release(workspaceId, turnId): Result<void> {
      const changed = remove.run(workspaceId, turnId).changes;
      return Number(changed) === 1 ? ok(undefined) : err(controllerError("not_found"));
    },
  };
}
