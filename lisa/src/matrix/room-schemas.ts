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

/** A room's joined and invited members. */
export interface RoomMembers {
  readonly joined: readonly string[];
  readonly invited: readonly string[];
}

/** `GET /rooms/{room}/members`: the member events (`state_key` the user, `content.membership`); odd entries are skipped. */
export const roomMembersSchema = v.object({ chunk: v.array(v.unknown()) });
const memberEventSchema = v.object({ state_key: id, content: v.object({ membership: v.string() }) });

/** Normalises `/members` to the joined and the invited user ids. */
export function normalizeRoomMembers(body: unknown): Result<RoomMembers, MatrixError> {
  const parsed = parseBody(roomMembersSchema, body);
  if (!parsed.ok) return parsed;
  const joined: string[] = [];
  const invited: string[] = [];
  for (const entry of parsed.value.chunk) {
    const member = v.safeParse(memberEventSchema, entry);
    if (!member.success) continue;
    if (member.output.content.membership === "join") joined.push(member.output.state_key);
    else if (member.output.content.membership === "invite") invited.push(member.output.state_key);
  }
  return ok({ joined, invited });
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
