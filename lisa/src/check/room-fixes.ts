// The operator's fix for each room condition (LISA-ROOMS-01), shared by `lisa
// check` and the documentation. Texts name rooms, users and URLs only: never
// a secret or anything said in a room.

import { displayUrl } from "./preflight-result.ts";
import type { PowerFacts, RoomCode } from "../rooms/room-diagnosis.ts";
import { ROOM_CODES } from "../rooms/room-diagnosis.ts";

/** The configuration key an allowed room came from: listed by id, or reached through an alias. */
export type RoomSource =
  | { readonly key: "matrix.allowed_room_ids" }
  | { readonly key: "matrix.allowed_room_aliases"; readonly alias: string };

/** What a fix text may mention. */
export interface FixFacts {
  readonly homeserverUrl: string;
  readonly userId: string;
  /** The room id (or the alias, for alias conditions). */
  readonly room: string;
  /** Where the room came from in the configuration. */
  readonly source: RoomSource;
  readonly power?: PowerFacts | null;
  /** For a moved alias: the room it now points to and the room Lisa served. */
  readonly resolved?: string | null;
  readonly known?: string | null;
  /** For a failed lookup: the request's error code. */
  readonly errorCode?: string;
}

/** The room's configuration entry in words: `matrix.allowed_room_ids`, or `#alias in matrix.allowed_room_aliases` for a room reached through an alias. */
function entry(source: RoomSource, room: string): string {
  return source.key === "matrix.allowed_room_ids" || source.alias === room ? source.key : `${source.alias} in ${source.key}`;
}

function joinUrl(facts: FixFacts): string {
  return `${displayUrl(facts.homeserverUrl)}/_matrix/client/v3/rooms/${encodeURIComponent(facts.room)}/join`;
}

/** One operator-facing sentence: what is wrong, which configuration entry the room came from, and exactly what to do. */
export function roomFix(code: RoomCode, facts: FixFacts): string {
  const { userId: user, room, source } = facts;
  const from = entry(source, room);
  switch (code) {
    case ROOM_CODES.invitePending:
      return `Lisa (${user}) is invited to ${room} (allowed by ${from}) but has not joined, so she sees nothing there: accept the invitation as Lisa ` +
        `(log in as ${user} in a Matrix client and join), or POST ${joinUrl(facts)} with body {} and Lisa's access token`;
    case ROOM_CODES.notJoined:
      return `Lisa (${user}) is not in ${room}: a member invites her (/invite ${user} in Element), then she accepts ` +
        `the invitation (log in as ${user} and join), or check ${source.key === "matrix.allowed_room_ids" ? `the room id in ${source.key}` : `the alias ${from}`}`;
    case ROOM_CODES.encrypted:
      return `${room} (allowed by ${from}) is end-to-end encrypted (m.room.encryption is set) and Lisa reads no encrypted events; encryption ` +
        "cannot be turned off in a room: create a new room with encryption off (Element: Create room, switch off " +
        `"Enable end-to-end encryption"), invite Lisa there, allow the new room in ${source.key} instead, and restart Lisa ` +
        "(she reads the allowlist at start)";
    case ROOM_CODES.sendForbidden: {
      const power = facts.power;
      const levels = power === null || power === undefined || power.level === null ? "" : ` (Lisa has ${power.level}, sending messages needs ${power.required})`;
      return `Lisa's power level in ${room} (allowed by ${from}) does not allow sending m.room.message${levels}: a room admin raises Lisa's ` +
        "power level or lowers the level for \"Send messages\" (Element: Room settings > Roles & Permissions); " +
        "typing notifications need no power level";
    }
    case ROOM_CODES.aliasUnresolved:
      return `the alias ${room} does not resolve on ${displayUrl(facts.homeserverUrl)}: correct it in matrix.allowed_room_aliases, ` +
        "or publish it again in the room's settings (local or published addresses); the room is not served until it resolves";
    case ROOM_CODES.aliasMoved:
      return `the alias ${room} in matrix.allowed_room_aliases now points to ${facts.resolved ?? "another room"}, but Lisa served it as ${facts.known ?? "another room"}; ` +
        `Lisa does not follow a repointed alias: point the alias back, or, if the move is intended, add ${facts.resolved ?? "the new room id"} ` +
        "to matrix.allowed_room_ids (Lisa then serves the new room and remembers it for the alias)";
    case ROOM_CODES.lookupFailed:
      return `the homeserver did not answer about ${room} (allowed by ${from})${facts.errorCode === undefined ? "" : ` (${facts.errorCode})`}: ` +
        "run the check again; if it persists, check the homeserver's logs";
  }
}
