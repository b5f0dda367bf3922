// Accessor of the `commands` table: idempotency on command identity. A
// receipt holds metadata and external source identity only, never a payload
// (P-STO-10), under every retention profile.

import { controllerError, err, ok, type Result } from "../domain/errors.ts";
import type { CommandStore } from "../domain/ports.ts";
import type { CommandRecord } from "../domain/records.ts";
import type { StoreHandle } from "./handle.ts";
import { validReceipt } from "./journal-rules.ts";
import { int, json, primaryCode, SQLITE_CONSTRAINT, text, toJson, type Row } from "./rows.ts";

/** Maps a validated `commands` row to its record. */
export function commandFromRow(row: Row): CommandRecord {
  return {
    principal: text(row, "principal"),
    application: text(row, "application"),
    commandId: text(row, "command_id"),
    method: text(row, "method"),
    inputDigest: text(row, "input_digest"),
    receipt: json(row, "receipt"),
    createdAt: int(row, "created_at"),
  };
}

/** The CommandStore port over a store handle. */
export function commandStore(handle: StoreHandle): CommandStore {
  const { db } = handle;
  const insert = db.prepare(`INSERT INTO commands (principal, application, command_id, method, input_digest, receipt, created_at)
    VALUES (?, ?, ?, ?, ?, ?, ?)`);
  const select = db.prepare("SELECT * FROM commands WHERE principal = ? AND application = ? AND command_id = ?");
  return {
    insert(command): Result<CommandRecord> {
      if (!validReceipt(command.receipt)) return err(controllerError("invalid_params", { where: "commands.receipt" }));
      try {
        insert.run(command.principal, command.application, command.commandId, command.method, command.inputDigest,
          toJson(command.receipt), command.createdAt);
        return ok(command);
      } catch (error) {
        return err(controllerError(primaryCode(error) === SQLITE_CONSTRAINT ? "command_conflict" : "storage_write_failed", { where: "commands" }));
      }
    },
    get(principal, application, commandId): CommandRecord | undefined {
      const row = select.get(principal, application, commandId) as Row | undefined;
      return row === undefined ? undefined : commandFromRow(row);
    },
  };
}
