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

const MAX_SAFE = "9007199254740991";
const sqlIn = (column: string, values: readonly string[]) => `${column} IN (${values.map((v) => `'${v}'`).join(", ")})`;

/**
 * A marker row proven valid and linked in SQL, for startup (record-validation.ts):
 * each clause implies a check of MARKER_SHAPE or markerRulesHold, so a row it
 * proves is one validPreparationMarkerRow accepts (rows it does not prove are
 * read and judged by those checks). Its turn and thread are rows of turns
 * and threads (so the row's foreign keys hold), whose ids startup proved to be
 * ids before (the turn and thread ids: `id`; equality is byte-wise, a NUL
 * included). Integers are of type integer within the safe range (`positive`,
 * `count`); enumerations are compared byte-wise (`oneOf`, `oneOfOrNull`); a
 * requested mode whose characters before a first NUL (`length`) are as many as
 * its bytes is ASCII without a NUL, so its byte count is its length in JS
 * (`shortTextOrNull`: 1..1,024). `flag`: 0 or 1; then the rules.
 */
export const MARKER_PROVEN = [
  "turn_id IN (SELECT turn_id FROM turns)", "thread_id IN (SELECT thread_id FROM threads)",
  `typeof(config_version) = 'integer' AND config_version BETWEEN 1 AND ${MAX_SAFE}`,
  `typeof(prepared_at) = 'integer' AND prepared_at BETWEEN 0 AND ${MAX_SAFE}`,
  sqlIn("retention", RETENTION_PROFILES), sqlIn("approval_requested", APPROVAL_POLICIES), sqlIn("approval_effective", APPROVAL_POLICIES),
  `(native_mode_requested IS NULL OR length(native_mode_requested) = octet_length(native_mode_requested)
    AND octet_length(native_mode_requested) BETWEEN 1 AND 1024)`,
  `(native_mode_result IS NULL OR ${sqlIn("native_mode_result", NATIVE_MODE_RESULTS)})`,
  "payload_volatile IN (0, 1)",
  "(suppressed_by IS NULL AND approval_effective = approval_requested OR suppressed_by = 'restricted' AND approval_effective = 'ask')",
  "(retention <> 'metadata-only' OR payload_volatile = 1)",
].join(" AND ");

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
