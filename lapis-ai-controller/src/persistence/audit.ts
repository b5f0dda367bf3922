// Accessor of the `audit` table: owner decisions that must stay on record
// (e.g. resolving a submission-unknown turn, P-TRN-06). Details hold short
// facts only, under the same rules as journal metadata.

import { controllerError, err, ok, type Result } from "../domain/errors.ts";
import type { AuditStore } from "../domain/ports.ts";
import type { AuditRecord, JournalMetadata } from "../domain/records.ts";
import type { StoreHandle } from "./handle.ts";
import { validKind, validMetadata } from "./journal-rules.ts";
import { allColumns } from "./nul-text.ts";
import { int, json, text, toJson, type Row } from "./rows.ts";

/** Maps a validated `audit` row to its record. */
export function auditFromRow(row: Row): AuditRecord {
  return {
    auditId: int(row, "audit_id"),
    at: int(row, "at"),
    actor: text(row, "actor"),
    action: text(row, "action"),
    subjectKind: text(row, "subject_kind"),
    subjectId: text(row, "subject_id"),
    details: json<JournalMetadata>(row, "details"),
  };
}

const AUDIT_PAGE_MAX = 10_000;

/** The AuditStore port over a store handle. */
export function auditStore(handle: StoreHandle): AuditStore {
  const { db } = handle;
  const insert = db.prepare("INSERT INTO audit (at, actor, action, subject_kind, subject_id, details) VALUES (?, ?, ?, ?, ?, ?)");
  const page = db.prepare(`SELECT ${allColumns(db, "audit")} FROM audit WHERE audit_id > ? ORDER BY audit_id LIMIT ?`);
  return {
    record(entry): Result<AuditRecord> {
      if (!validKind(entry.action)) return err(controllerError("invalid_params", { where: "audit.action" }));
      if (!validMetadata(entry.details)) return err(controllerError("invalid_params", { where: "audit.details" }));
      try {
        const result = insert.run(entry.at, entry.actor, entry.action, entry.subjectKind, entry.subjectId, toJson(entry.details));
        return ok({ ...entry, auditId: Number(result.lastInsertRowid) });
      } catch {
        return err(controllerError("storage_write_failed", { where: "audit" }));
      }
    },
    list(afterAuditId = 0, limit = 1_000): readonly AuditRecord[] {
      const size = Math.max(1, Math.min(Math.floor(limit), AUDIT_PAGE_MAX));
      return (page.all(afterAuditId, size) as Row[]).map(auditFromRow);
    },
  };
}
