// Accessor of the `turns` table. Error columns hold short codes only (P-STO-08);
// a state change outside the transition table is refused.

import { controllerError, ERROR_CODE_PATTERN, err, ok, type Result } from "../domain/errors.ts";
import type { TurnStore } from "../domain/ports.ts";
import type { TurnRecord, TurnState } from "../domain/records.ts";
import { canTransition } from "../domain/turn-state.ts";
import type { StoreHandle } from "./handle.ts";
import { int, primaryCode, SQLITE_CONSTRAINT, text, textOrNull, type Row } from "./rows.ts";
import { statementCache } from "./statement-cache.ts";

/** Maps a validated `turns` row to its record. */
export function turnFromRow(row: Row): TurnRecord {
  return {
    turnId: text(row, "turn_id"),
    threadId: text(row, "thread_id"),
    commandId: text(row, "command_id"),
    attemptOf: textOrNull(row, "attempt_of"),
    state: text(row, "state") as TurnState,
    workspaceId: text(row, "workspace_id"),
    provider: text(row, "provider"),
    configVersion: int(row, "config_version"),
    errorCode: textOrNull(row, "error_code"),
    createdAt: int(row, "created_at"),
    updatedAt: int(row, "updated_at"),
  };
}

function codeOk(code: string | null | undefined): boolean {
  return code === null || code === undefined || ERROR_CODE_PATTERN.test(code);
}

/** The TurnStore port over a store handle. */
export function turnStore(handle: StoreHandle): TurnStore {
  const { db } = handle;
  const insert = db.prepare(`INSERT INTO turns (turn_id, thread_id, command_id, attempt_of, state, workspace_id, provider,
    config_version, error_code, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const select = db.prepare("SELECT * FROM turns WHERE turn_id = ?");
  const byThread = db.prepare("SELECT * FROM turns WHERE thread_id = ? ORDER BY created_at, rowid");
  const update = db.prepare("UPDATE turns SET state = ?, error_code = ?, updated_at = ? WHERE turn_id = ?");
  const statement = statementCache(db);
  const get = (turnId: string): TurnRecord | undefined => {
    const row = select.get(turnId) as Row | undefined;
    return row === undefined ? undefined : turnFromRow(row);
  };
  return {
    insert(turn): Result<TurnRecord> {
      if (!codeOk(turn.errorCode)) return err(controllerError("invalid_params", { where: "turns.error_code" }));
      try {
        insert.run(turn.turnId, turn.threadId, turn.commandId, turn.attemptOf, turn.state, turn.workspaceId, turn.provider,
          turn.configVersion, turn.errorCode, turn.createdAt, turn.updatedAt);
        return ok(turn);
      } catch (error) {
        return err(controllerError(primaryCode(error) === SQLITE_CONSTRAINT ? "command_conflict" : "storage_write_failed", { where: "turns" }));
      }
    },
    get,
    listByThread: (threadId) => (byThread.all(threadId) as Row[]).map(turnFromRow),
    listByState(states): readonly TurnRecord[] {
      if (states.length === 0) return [];
      const rows = statement(`SELECT * FROM turns WHERE state IN (${states.map(() => "?").join(", ")}) ORDER BY created_at, rowid`).all(...states);
      return (rows as Row[]).map(turnFromRow);
    },
    setState(turnId, state, at, errorCode, read): Result<TurnRecord> {
      if (!codeOk(errorCode)) return err(controllerError("invalid_params", { where: "turns.error_code" }));
      // A row the caller read counts only when the caller's transaction is open already: nothing wrote in between.
      const given = read !== undefined && read.turnId === turnId && db.isTransaction ? read : undefined;
      return handle.transact(() => {
        const current = given ?? get(turnId);
        if (current === undefined) return err(controllerError("not_found"));
        // The state machine of domain/turn-state.ts holds for every writer.
        if (!canTransition(current.state, state)) return err(controllerError("turn_transition_invalid", { where: "turns.state" }));
        const code = errorCode === undefined ? current.errorCode : errorCode;
        update.run(state, code, at, turnId);
        // The row as written: the one read above with the three columns just set, not read again (P-PRF-14).
        return ok({ ...current, state, errorCode: code, updatedAt: at });
      });
    },
  };
}
