// Preparation markers (P-STO-07): the retained, non-content record of how a
// turn was prepared (approval policy requested and effective, restricted
// suppression, native-mode result). They survive the loss of volatile
// payloads (P-ARC-04) and have their own retained schema and validator.

import { controllerError, err, ok, type Result } from "../domain/errors.ts";
import type { PreparationMarkerStore } from "../domain/ports.ts";
import {
  APPROVAL_POLICIES, NATIVE_MODE_RESULTS, RETENTION_PROFILES,
  type NativeModeResult, type PreparationMarkerRecord,
} from "../domain/records.ts";
import type { StoreHandle } from "./handle.ts";
import { allColumns } from "./nul-text.ts";
import { int, primaryCode, SQLITE_CONSTRAINT, text, textOrNull, type Row } from "./rows.ts";
import { count, flag, id, oneOf, oneOfOrNull, positive, rowMatches, shortTextOrNull, type Check } from "./validators.ts";

/** The shape of each column of a marker row (what rowMatches checks, and startup's array reads: record-validation.ts). */
export const MARKER_SHAPE: Readonly<Record<string, Check>> = {
  turn_id: id,
  thread_id: id,
  config_version: positive,
  retention: oneOf(RETENTION_PROFILES),
  approval_requested: oneOf(APPROVAL_POLICIES),
  approval_effective: oneOf(APPROVAL_POLICIES),
  suppressed_by: oneOfOrNull(["restricted"]),
  native_mode_requested: shortTextOrNull,
  native_mode_result: oneOfOrNull(NATIVE_MODE_RESULTS),
  payload_volatile: flag,
  prepared_at: count,
};

/**
 * The rules between a marker row's columns, beyond their shapes (suppression
 * implies `ask`; a metadata-only marker says its payload was volatile); the
 * row read through `column`, so startup judges rows read as arrays by the
 * same rules (record-validation.ts).
 */
export function markerRulesHold(column: (name: string) => unknown): boolean {
  const suppressedBy = column("suppressed_by");
  if (suppressedBy === "restricted" && column("approval_effective") !== "ask") return false;
  if (suppressedBy === null && column("approval_effective") !== column("approval_requested")) return false;
  if (column("retention") === "metadata-only" && column("payload_volatile") !== 1) return false;
  return true;
}

/**
 * The validator of a retained `preparation_markers` row: column shapes
 * (MARKER_SHAPE), plus the rules between them (markerRulesHold).
 */
export function validPreparationMarkerRow(row: Row): boolean {
  return rowMatches(row, MARKER_SHAPE) && markerRulesHold((name) => row[name]);
}

/** Maps a validated marker row to its record. */
export function markerFromRow(row: Row): PreparationMarkerRecord {
  return {
    turnId: text(row, "turn_id"),
    threadId: text(row, "thread_id"),
    configVersion: int(row, "config_version"),
    retention: text(row, "retention") as PreparationMarkerRecord["retention"],
    approvalRequested: text(row, "approval_requested") as PreparationMarkerRecord["approvalRequested"],
    approvalEffective: text(row, "approval_effective") as PreparationMarkerRecord["approvalEffective"],
    suppressedBy: textOrNull(row, "suppressed_by") as "restricted" | null,
    nativeModeRequested: textOrNull(row, "native_mode_requested"),
    nativeModeResult: textOrNull(row, "native_mode_result") as NativeModeResult | null,
    payloadVolatile: int(row, "payload_volatile") === 1,
    preparedAt: int(row, "prepared_at"),
  };
}

/** A marker's row as the store writes it (also the bench's seed: bench/lib/seed.ts), to be judged by validPreparationMarkerRow. */
export function preparationMarkerRow(marker: PreparationMarkerRecord): Row {
  return {
    turn_id: marker.turnId,
    thread_id: marker.threadId,
    config_version: marker.configVersion,
    retention: marker.retention,
    approval_requested: marker.approvalRequested,
    approval_effective: marker.approvalEffective,
    suppressed_by: marker.suppressedBy,
    native_mode_requested: marker.nativeModeRequested,
    native_mode_result: marker.nativeModeResult,
    payload_volatile: marker.payloadVolatile ? 1 : 0,
    prepared_at: marker.preparedAt,
  };
}

/** The PreparationMarkerStore port over a store handle; writes pass the same validator as startup. */
export function preparationMarkerStore(handle: StoreHandle): PreparationMarkerStore {
  const { db } = handle;
  const columns = Object.keys(MARKER_SHAPE);
  const insert = db.prepare(`INSERT INTO preparation_markers (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`);
  const select = db.prepare(`SELECT ${allColumns(db, "preparation_markers")} FROM preparation_markers WHERE turn_id = ?`);
  return {
    insert(marker): Result<PreparationMarkerRecord> {
      const row = preparationMarkerRow(marker);
      if (!validPreparationMarkerRow(row)) return err(controllerError("invalid_params", { where: "preparation_markers" }));
      try {
        insert.run(...columns.map((column) => row[column] ?? null));
        return ok(marker);
      } catch (error) {
        return err(controllerError(primaryCode(error) === SQLITE_CONSTRAINT ? "invalid_params" : "storage_write_failed", { where: "preparation_markers" }));
      }
    },
    get(turnId): PreparationMarkerRecord | undefined {
      const row = select.get(turnId) as Row | undefined;
      return row === undefined ? undefined : markerFromRow(row);
    },
  };
}
