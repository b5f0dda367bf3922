// Accessor of the `interactions` table. A terminal interaction never settles again (P-TRN-14).

import { controllerError, err, ok, type Result } from "../domain/errors.ts";
import type { InteractionStore } from "../domain/ports.ts";
import type { Decider, InteractionRecord } from "../domain/records.ts";
import type { StoreHandle } from "./handle.ts";
import { allColumns } from "./nul-text.ts";
import { int, intOrNull, json, primaryCode, SQLITE_CONSTRAINT, text, textOrNull, toJson, type Row } from "./rows.ts";

/** Maps a validated `interactions` row to its record. */
export function interactionFromRow(row: Row): InteractionRecord {
  return {
    interactionId: text(row, "interaction_id"),
    turnId: text(row, "turn_id"),
    threadId: text(row, "thread_id"),
    nativeRequestId: text(row, "native_request_id"),
    kind: text(row, "kind") as InteractionRecord["kind"],
    state: text(row, "state") as InteractionRecord["state"],
    optionIds: json<string[]>(row, "option_ids"),
    outcome: textOrNull(row, "outcome"),
    decidedBy: textOrNull(row, "decided_by") as Decider | null,
    deadlineAt: int(row, "deadline_at"),
    createdAt: int(row, "created_at"),
    settledAt: intOrNull(row, "settled_at"),
  };
}

/** The InteractionStore port over a store handle. */
export function interactionStore(handle: StoreHandle): InteractionStore {
  const { db } = handle;
  const insert = db.prepare(`INSERT INTO interactions (interaction_id, turn_id, thread_id, native_request_id, kind, state, option_ids,
    outcome, decided_by, deadline_at, created_at, settled_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const columns = allColumns(db, "interactions");
  const select = db.prepare(`SELECT ${columns} FROM interactions WHERE interaction_id = ?`);
  const byTurn = db.prepare(`SELECT ${columns} FROM interactions WHERE turn_id = ? ORDER BY created_at, rowid`);
  const settle = db.prepare("UPDATE interactions SET state = ?, outcome = ?, decided_by = ?, settled_at = ? WHERE interaction_id = ? AND state = 'pending'");
  const get = (id: string): InteractionRecord | undefined => {
    const row = select.get(id) as Row | undefined;
    return row === undefined ? undefined : interactionFromRow(row);
  };
  return {
    insert(interaction): Result<InteractionRecord> {
      try {
        insert.run(interaction.interactionId, interaction.turnId, interaction.threadId, interaction.nativeRequestId, interaction.kind,
          interaction.state, toJson(interaction.optionIds), interaction.outcome, interaction.decidedBy, interaction.deadlineAt,
          interaction.createdAt, interaction.settledAt);
        return ok(interaction);
      } catch (error) {
        return err(controllerError(primaryCode(error) === SQLITE_CONSTRAINT ? "invalid_params" : "storage_write_failed", { where: "interactions" }));
      }
    },
    get,
    listByTurn: (turnId) => (byTurn.all(turnId) as Row[]).map(interactionFromRow),
    settle(interactionId, update): Result<InteractionRecord> {
      if (update.state === "pending") return err(controllerError("invalid_params", { where: "interactions.state" }));
      return handle.transact(() => {
        const current = get(interactionId);
        if (current === undefined) return err(controllerError("not_found"));
        if (current.state !== "pending") return err(controllerError("interaction_closed"));
        settle.run(update.state, update.outcome, update.decidedBy, update.settledAt, interactionId);
        return ok(get(interactionId) as InteractionRecord);
      });
    },
  };
}
