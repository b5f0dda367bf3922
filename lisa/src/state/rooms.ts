import type { LedgerConnection } from "./connection.ts";
import { invalidInput } from "./errors.ts";
import type { RoomConditionRow } from "./types.ts";
import { isCode, isRoomAlias, isRoomId } from "./validate.ts";

// Per-room conditions and alias bindings (LISA-ROOMS-01). A condition row exists
// while the condition lasts; `lisa status` reads them and reports degraded.

function requireRoom(room: unknown): string {
  if (!isRoomId(room) && !isRoomAlias(room)) throw invalidInput("room condition room");
  return room;
}

/** Every active condition, oldest first. */
export function readRoomConditions(conn: LedgerConnection): RoomConditionRow[] {
  return conn.read("read room conditions", () =>
    conn.stmt("SELECT room, code, since_ms FROM room_conditions ORDER BY since_ms, room, code").all().map((row) => ({
      room: row["room"] as string,
      code: row["code"] as string,
      sinceMs: row["since_ms"] as number,
    })));
}

/** Records a condition; false when it was already recorded (its start time is kept). */
export function raiseRoomCondition(conn: LedgerConnection, room: string, code: string): boolean {
  requireRoom(room);
  if (!isCode(code)) throw invalidInput("room condition code");
  return conn.write("raise room condition", (now) =>
    Number(conn.stmt("INSERT INTO room_conditions(room, code, since_ms) VALUES (?, ?, ?) ON CONFLICT(room, code) DO NOTHING")
      .run(room, code, now).changes) > 0);
}

/** Ends a condition; false when it was not recorded. */
export function clearRoomCondition(conn: LedgerConnection, room: string, code: string): boolean {
  return conn.write("clear room condition", () =>
    Number(conn.stmt("DELETE FROM room_conditions WHERE room = ? AND code = ?").run(room, code).changes) > 0);
}

/** Drops the conditions of rooms (ids or aliases) no longer configured. */
export function pruneRoomConditions(conn: LedgerConnection, keep: readonly string[]): number {
  const kept = new Set(keep);
  return conn.write("prune room conditions", () => {
    let removed = 0;
    for (const row of conn.stmt("SELECT DISTINCT room FROM room_conditions").all()) {
      const room = row["room"] as string;
      if (!kept.has(room)) removed += Number(conn.stmt("DELETE FROM room_conditions WHERE room = ?").run(room).changes);
    }
    return removed;
  });
}

/** The room an alias resolved to when it was last served, or null. */
export function readAliasBinding(conn: LedgerConnection, alias: string): string | null {
  return conn.read("read alias binding", () => {
    const row = conn.stmt("SELECT room_id FROM room_aliases WHERE alias = ?").get(alias);
    return row === undefined ? null : (row["room_id"] as string);
  });
}

/** Remembers (or moves, with the operator's consent) the room an alias is served as. */
export function writeAliasBinding(conn: LedgerConnection, alias: string, roomId: string): void {
  if (!isRoomAlias(alias)) throw invalidInput("alias");
  if (!isRoomId(roomId)) throw invalidInput("alias room id");
  conn.write("bind alias", (now) => {
    conn.stmt(`INSERT INTO room_aliases(alias, room_id, updated_at_ms) VALUES (?, ?, ?)
      ON CONFLICT(alias) DO UPDATE SET room_id = excluded.room_id, updated_at_ms = excluded.updated_at_ms`).run(alias, roomId, now);
  });
}

/** Forgets the bindings of aliases no longer configured (re-adding an alias then binds it afresh). */
export function pruneAliasBindings(conn: LedgerConnection, keep: readonly string[]): number {
  const kept = new Set(keep);
  return conn.write("prune alias bindings", () => {
    let removed = 0;
    for (const row of conn.stmt("SELECT alias FROM room_aliases").all()) {
      const alias = row["alias"] as string;
      if (!kept.has(alias)) removed += Number(conn.stmt("DELETE FROM room_aliases WHERE alias = ?").run(alias).changes);
    }
    return removed;
  });
}
