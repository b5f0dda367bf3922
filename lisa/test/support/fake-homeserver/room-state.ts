// Room inspection endpoints (LISA-ROOMS-01): `GET /rooms/{id}/state/{type}/{key}`
// (content, or the whole event with `format=event`), the room directory
// (`GET /directory/room/{alias}`), and the power-level check of `PUT /send`.

import type { Session } from "./accounts.ts";
import { errorReply, isObject, okReply } from "./reply.ts";
import type { Reply } from "./reply.ts";
import type { RoomStore } from "./store.ts";

function level(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isInteger(value) ? value : fallback;
}

/** Whether `userId` may send an event of `type` under the room's current power levels (creator 100 without them). */
export function maySend(store: RoomStore, roomId: string, userId: string, type: string): boolean {
  const current = (t: string) => store.stateBetween(roomId, 0, Number.POSITIVE_INFINITY).find((e) => e.type === t && e.stateKey === "");
  const power = current("m.room.power_levels");
  if (power === undefined) return true;
  const users = isObject(power.content["users"]) ? power.content["users"] : {};
  const events = isObject(power.content["events"]) ? power.content["events"] : {};
  const mine = level(users[userId], level(power.content["users_default"], 0));
  return mine >= level(events[type], level(power.content["events_default"], 0));
}

/** Aliases and the state and directory handlers. */
export class RoomDirectory {
  private readonly store: RoomStore;
  private readonly aliases = new Map<string, string>();

  constructor(store: RoomStore) {
    this.store = store;
  }

  /** Points `alias` at `roomId`, or deletes it (null). */
  setAlias(alias: string, roomId: string | null): void {
    if (roomId === null) this.aliases.delete(alias);
    else this.aliases.set(alias, roomId);
  }

  /** `GET /directory/room/{alias}`. */
  resolve(alias: string): Reply {
    const roomId = this.aliases.get(alias);
    if (roomId === undefined) return errorReply(404, "M_NOT_FOUND", `Room alias ${alias} not found`);
    return okReply({ room_id: roomId, servers: ["localhost"] });
  }

  /** `GET /rooms/{roomId}/state/{type}/{stateKey}`: joined members only, as on Synapse. */
  stateEvent(session: Session, roomId: string, type: string, stateKey: string, query: Readonly<Record<string, string>>): Reply {
    if (this.store.membershipAt(roomId, session.userId) !== "join") {
      return errorReply(403, "M_FORBIDDEN", `User ${session.userId} not in room ${roomId}`);
    }
    const event = this.store.stateBetween(roomId, 0, Number.POSITIVE_INFINITY).find((e) => e.type === type && e.stateKey === stateKey);
    if (event === undefined) return errorReply(404, "M_NOT_FOUND", `Event not found.`);
    const viewer = { userId: session.userId, deviceId: session.deviceId };
    return okReply(query["format"] === "event" ? this.store.toClient(event, viewer, true) : structuredClone(event.content));
  }
}
