// What Lisa can find out about an allowed room without sending anything into
// it (LISA-ROOMS-01): membership (joined / invited), end-to-end encryption, whether
// her power level lets her send `m.room.message`, and the room version. Used
// by `lisa check` and by the service at startup.

import { err, ok, type Result } from "../errors.ts";
import type { MatrixError } from "../matrix/errors.ts";
import type { RoomInspectPort, StateEvent } from "../matrix/port.ts";

/** Stable codes of the room conditions Lisa reports (logs, `lisa status`, `lisa check`). */
export const ROOM_CODES = {
  notJoined: "room_not_joined",
  invitePending: "room_invite_pending",
  encrypted: "room_encrypted",
  sendForbidden: "room_send_forbidden",
  aliasUnresolved: "room_alias_unresolved",
  aliasMoved: "room_alias_moved",
  lookupFailed: "room_lookup_failed",
} as const;

/** One of `ROOM_CODES`. */
export type RoomCode = (typeof ROOM_CODES)[keyof typeof ROOM_CODES];

/** Lisa's power against what `m.room.message` needs. */
export interface PowerFacts {
  readonly canSend: boolean;
  /** Lisa's level; null for a room creator in room versions with privileged creators (no level applies). */
  readonly level: number | null;
  readonly required: number;
}

/** The facts of one room. Membership facts are always known; the rest only for a joined room. */
export interface RoomDiagnosis {
  readonly roomId: string;
  readonly joined: boolean;
  readonly invited: boolean;
  readonly encrypted: boolean | null;
  readonly power: PowerFacts | null;
  readonly roomVersion: string | null;
  /** A request about this room that failed (its facts are then incomplete). */
  readonly failure: MatrixError | null;
  /** The `m.room.create` and `m.room.power_levels` events read (joined rooms), so later power changes can be judged. */
  readonly create?: StateEvent | null;
  readonly powerLevels?: StateEvent | null;
}

// Room versions whose creators outrank every power level (MSC4289).
const PRIVILEGED_CREATOR_VERSIONS = new Set(["12"]);
const DEFAULT_LEVEL_FOR_CREATOR = 100;

function levelOf(value: unknown): number | null {
  if (typeof value === "number" && Number.isInteger(value)) return value;
  // Old room versions allowed levels as strings.
  if (typeof value === "string" && /^[+-]?\d{1,15}$/.test(value.trim())) return Number(value.trim());
  return null;
}

function record(value: unknown): Readonly<Record<string, unknown>> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The version a create event states (version "1" when absent: Matrix's rule for old rooms). */
export function roomVersionOf(create: StateEvent | null): string | null {
  if (create === null) return null;
  const version = create.content["room_version"];
  return typeof version === "string" && version.length > 0 ? version : "1";
}

/**
 * Whether `userId` may send `m.room.message` under the room's power levels:
 * her level (`users`, else `users_default`, else 0) against the level the
 * event type needs (`events`, else `events_default`, else 0).
 */
export function messagePower(userId: string, powerLevels: StateEvent | null, create: StateEvent | null): PowerFacts {
  const creators = new Set<string>();
  if (create?.sender !== null && create?.sender !== undefined) creators.add(create.sender);
  const additional = create?.content["additional_creators"];
  if (Array.isArray(additional)) for (const user of additional) if (typeof user === "string") creators.add(user);
  const version = roomVersionOf(create);
  if (version !== null && PRIVILEGED_CREATOR_VERSIONS.has(version) && creators.has(userId)) {
    return { canSend: true, level: null, required: 0 };
  }
  if (powerLevels === null) {
    // No power levels event: the creator has 100, everyone else 0, and messages need 0.
    return { canSend: true, level: creators.has(userId) ? DEFAULT_LEVEL_FOR_CREATOR : 0, required: 0 };
  }
  const content = powerLevels.content;
  const level = levelOf(record(content["users"])[userId]) ?? levelOf(content["users_default"]) ?? 0;
  const required = levelOf(record(content["events"])["m.room.message"]) ?? levelOf(content["events_default"]) ?? 0;
  return { canSend: level >= required, level, required };
}

async function inspectJoined(inspect: RoomInspectPort, userId: string, roomId: string, signal: AbortSignal): Promise<RoomDiagnosis> {
  const [create, encryption, power] = await Promise.all([
    inspect.stateEvent(roomId, "m.room.create", "", signal),
    inspect.stateEvent(roomId, "m.room.encryption", "", signal),
    inspect.stateEvent(roomId, "m.room.power_levels", "", signal),
  ]);
  const failure = [create, encryption, power].find((result) => !result.ok);
  const createEvent = create.ok ? create.value : null;
  return {
    roomId,
    joined: true,
    invited: false,
    encrypted: encryption.ok ? encryption.value !== null : null,
    power: create.ok && power.ok ? messagePower(userId, power.value, createEvent) : null,
    roomVersion: roomVersionOf(createEvent),
    failure: failure === undefined || failure.ok ? null : failure.error,
    create: createEvent,
    powerLevels: power.ok ? power.value : null,
  };
}

/**
 * Diagnoses each room: one `/joined_rooms`, one invite-only `/sync` when some
 * room is not joined, and three state reads per joined room. Fails only when
 * membership itself cannot be read.
 */
export async function diagnoseRooms(
  inspect: RoomInspectPort, userId: string, roomIds: readonly string[], signal: AbortSignal,
): Promise<Result<RoomDiagnosis[], MatrixError>> {
  if (roomIds.length === 0) return ok([]);
  const joined = await inspect.joinedRooms(signal);
  if (!joined.ok) return err(joined.error);
  const joinedSet = new Set(joined.value);
  const outside = roomIds.filter((roomId) => !joinedSet.has(roomId));
  const invited = outside.length === 0 ? ok([] as readonly string[]) : await inspect.invitedRooms(outside, signal);
  if (!invited.ok) return err(invited.error);
  const invitedSet = new Set(invited.value);
  const results: RoomDiagnosis[] = [];
  // A few rooms at a time: up to 100 rooms must not mean 300 requests at once.
  for (let start = 0; start < roomIds.length; start += ROOMS_IN_PARALLEL) {
    results.push(...await Promise.all(roomIds.slice(start, start + ROOMS_IN_PARALLEL).map((roomId) => joinedSet.has(roomId)
      ? inspectJoined(inspect, userId, roomId, signal)
      : Promise.resolve({
        roomId, joined: false, invited: invitedSet.has(roomId), encrypted: null, power: null, roomVersion: null, failure: null,
      }))));
  }
  return ok(results);
}

const ROOMS_IN_PARALLEL = 4;

/** The conditions a diagnosis shows, most blocking first. */
export function conditionsOf(diagnosis: RoomDiagnosis): RoomCode[] {
  if (!diagnosis.joined) return [diagnosis.invited ? ROOM_CODES.invitePending : ROOM_CODES.notJoined];
  const codes: RoomCode[] = [];
  if (diagnosis.encrypted === true) codes.push(ROOM_CODES.encrypted);
  if (diagnosis.power !== null && !diagnosis.power.canSend) codes.push(ROOM_CODES.sendForbidden);
  return codes;
}

/** The membership, encryption and power codes the service tracks per room (alias codes are tracked per alias). */
export const ROOM_STATE_CODES: readonly RoomCode[] = [
  ROOM_CODES.notJoined, ROOM_CODES.invitePending, ROOM_CODES.encrypted, ROOM_CODES.sendForbidden,
];
