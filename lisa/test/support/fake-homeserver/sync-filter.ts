// The parts of a Matrix sync filter the fake honours. Synapse honours room
// lists, timeline type/sender filters, `timeline.limit` and lazy loading;
// Continuwuity honours only `timeline.limit` and lazy loading.

import { isObject } from "./reply.ts";
import type { StoredEvent } from "./store.ts";
import type { HomeserverProfile } from "./types.ts";

/** A parsed sync filter. */
export interface SyncFilter {
  readonly timelineLimit: number;
  readonly rooms: ReadonlySet<string> | null;
  readonly notRooms: ReadonlySet<string>;
  readonly types: readonly string[] | null;
  readonly notTypes: readonly string[];
  readonly senders: ReadonlySet<string> | null;
  readonly notSenders: ReadonlySet<string>;
  readonly lazyLoadMembers: boolean;
}

/** Default `timeline.limit` per profile (Synapse 10, Continuwuity 30). */
export function defaultTimelineLimit(profile: HomeserverProfile): number {
  return profile !== "continuwuity" ? 10 : 30;
}

const stringList = (value: unknown): string[] | null =>
  Array.isArray(value) && value.every((v) => typeof v === "string") ? value : null;

/** Parses a filter definition; null when its shape is invalid. */
export function parseFilter(profile: HomeserverProfile, definition: unknown): SyncFilter | null {
  if (!isObject(definition)) return null;
  const room = definition["room"] ?? {};
  if (!isObject(room)) return null;
  const timeline = room["timeline"] ?? {};
  const state = room["state"] ?? {};
  if (!isObject(timeline) || !isObject(state)) return null;
  const limit = timeline["limit"] ?? defaultTimelineLimit(profile);
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 0) return null;
  const lazyLoadMembers = state["lazy_load_members"] === true || timeline["lazy_load_members"] === true;
  if (profile === "continuwuity") {
    return { timelineLimit: limit, rooms: null, notRooms: new Set(), types: null, notTypes: [], senders: null, notSenders: new Set(), lazyLoadMembers };
  }
  const rooms = room["rooms"] === undefined ? null : stringList(room["rooms"]);
  const types = timeline["types"] === undefined ? null : stringList(timeline["types"]);
  const senders = timeline["senders"] === undefined ? null : stringList(timeline["senders"]);
  if ((room["rooms"] !== undefined && rooms === null) || (timeline["types"] !== undefined && types === null) || (timeline["senders"] !== undefined && senders === null)) {
    return null;
  }
  return {
    timelineLimit: limit,
    rooms: rooms === null ? null : new Set(rooms),
    notRooms: new Set(stringList(room["not_rooms"]) ?? []),
    types,
    notTypes: stringList(timeline["not_types"]) ?? [],
    senders: senders === null ? null : new Set(senders),
    notSenders: new Set(stringList(timeline["not_senders"]) ?? []),
    lazyLoadMembers,
  };
}

/** The filter a sync without `filter` uses. */
export function defaultFilter(profile: HomeserverProfile): SyncFilter {
  const parsed = parseFilter(profile, {});
  if (parsed === null) throw new Error("fake homeserver: default filter must parse");
  return parsed;
}

// Filter type patterns may end in `*` (e.g. "m.room.*").
const typeMatches = (pattern: string, type: string): boolean =>
  pattern.endsWith("*") ? type.startsWith(pattern.slice(0, -1)) : pattern === type;

/** Whether the filter lets `roomId` into the response. */
export function roomAllowed(filter: SyncFilter, roomId: string): boolean {
  return (filter.rooms === null || filter.rooms.has(roomId)) && !filter.notRooms.has(roomId);
}

/** Whether a timeline event passes the filter's type and sender lists. */
export function eventAllowed(filter: SyncFilter, event: StoredEvent): boolean {
  if (filter.types !== null && !filter.types.some((p) => typeMatches(p, event.type))) return false;
  if (filter.notTypes.some((p) => typeMatches(p, event.type))) return false;
  if (filter.senders !== null && !filter.senders.has(event.sender)) return false;
  return !filter.notSenders.has(event.sender);
}

/**
 * Parses the `filter` of `/messages` and `/context` (a RoomEventFilter); both
 * servers honour its type and sender lists and lazy loading. Null when invalid.
 */
export function parseRoomEventFilter(raw: string | undefined): SyncFilter | null {
  if (raw === undefined) return parseFilter("synapse", {});
  let definition: unknown;
  try {
    definition = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!isObject(definition)) return null;
  const { limit: _ignored, ...timeline } = definition;
  return parseFilter("synapse", { room: { timeline, state: { lazy_load_members: definition["lazy_load_members"] === true } } });
}
