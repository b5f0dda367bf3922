import * as v from "valibot";
import { ok, type Result } from "../errors.ts";
import type { MatrixError } from "./errors.ts";
import type { RawEvent, StateEvent } from "./port.ts";
import { id, jsonObject, parseBody } from "./wire.ts";

// Shapes of the room-inspection responses (joined rooms, one state event, the
// room directory, the invite and leave sections of `/sync`) and the
// encryption markers a joined room's sync entry can carry.

/** `GET /joined_rooms`. */
export const joinedRoomsSchema = v.object({ joined_rooms: v.array(id) });

/** `GET /directory/room/{alias}`. */
export const directorySchema = v.object({ room_id: id });

const stateEventSchema = v.object({ type: v.string(), sender: id, content: jsonObject });

/** Event types that mark a room as end-to-end encrypted. */
export const ENCRYPTION_TYPES: readonly string[] = ["m.room.encryption", "m.room.encrypted"];

/** Normalises `/joined_rooms`. */
export function normalizeJoinedRooms(body: unknown): Result<readonly string[], MatrixError> {
  const parsed = parseBody(joinedRoomsSchema, body);
  return parsed.ok ? ok(parsed.value.joined_rooms) : parsed;
}

/** `GET /rooms/{room}/joined_members`: the member ids are the keys of `joined`. */
export const joinedMembersSchema = v.object({ joined: v.record(id, v.unknown()) });

/** Normalises `/joined_members` to the joined user ids. */
export function normalizeJoinedMembers(body: unknown): Result<readonly string[], MatrixError> {
  const parsed = parseBody(joinedMembersSchema, body);
  return parsed.ok ? ok(Object.keys(parsed.value.joined)) : parsed;
}

/** Normalises a directory lookup. */
export function normalizeDirectory(body: unknown): Result<string, MatrixError> {
  const parsed = parseBody(directorySchema, body);
  return parsed.ok ? ok(parsed.value.room_id) : parsed;
}

/** Normalises a state-event read: a full event (`format=event`) or, from older servers, its content alone. */
export function normalizeStateEvent(body: unknown): Result<StateEvent, MatrixError> {
  const event = v.safeParse(stateEventSchema, body);
  if (event.success) return ok({ sender: event.output.sender, content: event.output.content });
  const content = parseBody(jsonObject, body);
  return content.ok ? ok({ sender: null, content: content.value }) : content;
}

/** Room ids of a `/sync` section (`rooms.invite` or `rooms.leave`), whatever their entries hold. */
export function sectionRoomIds(section: unknown): string[] {
  return typeof section === "object" && section !== null && !Array.isArray(section) ? Object.keys(section) : [];
}

/** The raw `state.events` list of a joined room's sync entry (empty when absent or malformed). */
export function stateEventsOf(entry: unknown): readonly unknown[] {
  if (typeof entry !== "object" || entry === null) return [];
  const state = (entry as Record<string, unknown>)["state"];
  const events = typeof state === "object" && state !== null ? (state as Record<string, unknown>)["events"] : undefined;
  return Array.isArray(events) ? events : [];
}

/** True when a joined room's sync entry shows encryption in its state or timeline. */
export function showsEncryption(entry: unknown, timeline: readonly RawEvent[]): boolean {
  if (timeline.some((event) => ENCRYPTION_TYPES.includes(event.type))) return true;
  return stateEventsOf(entry).some((event: unknown) =>
    typeof event === "object" && event !== null && (event as Record<string, unknown>)["type"] === "m.room.encryption");
}
