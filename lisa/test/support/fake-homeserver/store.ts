// In-memory rooms: one global stream of events (positions 1, 2, ...), room
// state, memberships, redactions, a server clock and change notifications.

import { createHash, randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import type { ClientEvent, MemberSpec } from "./types.ts";

/** Who sent an event through `PUT /send` with which transaction id. */
export interface TxnOrigin {
  readonly userId: string;
  readonly deviceId: string;
  readonly txnId: string;
}

/** An event as the fake stores it (the original content survives redaction). */
export interface StoredEvent {
  readonly pos: number;
  readonly roomId: string;
  readonly eventId: string;
  readonly type: string;
  readonly sender: string;
  readonly ts: number;
  readonly stateKey: string | undefined;
  readonly content: Readonly<Record<string, unknown>>;
  readonly redacts: string | undefined;
  readonly prevContent: Readonly<Record<string, unknown>> | undefined;
  readonly replacesState: string | undefined;
  readonly txn: TxnOrigin | null;
  redactedBy: StoredEvent | null;
}

/** Input of `RoomStore.append`. */
export interface AppendInput {
  readonly roomId: string;
  readonly type: string;
  readonly sender: string;
  readonly content: Readonly<Record<string, unknown>>;
  readonly stateKey?: string;
  readonly redacts?: string;
  readonly txn?: TxnOrigin;
  readonly originServerTs?: number;
}

/** The user (and device) an event is serialised for. */
export interface Viewer {
  readonly userId: string;
  readonly deviceId: string | null;
}

interface Room {
  readonly events: StoredEvent[];
  readonly state: Map<string, StoredEvent>;
}

// Content keys that survive redaction (room version 10 rules).
const KEPT_ON_REDACTION: Readonly<Record<string, readonly string[]>> = {
  "m.room.member": ["membership", "join_authorised_via_users_server"],
  "m.room.create": ["creator"],
  "m.room.join_rules": ["join_rule", "allow"],
  "m.room.power_levels": ["ban", "events", "events_default", "kick", "redact", "state_default", "users", "users_default"],
  "m.room.history_visibility": ["history_visibility"],
};

/** Content of `event` after the redaction algorithm. */
export function redactedContent(type: string, content: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const key of KEPT_ON_REDACTION[type] ?? []) if (key in content) kept[key] = content[key];
  return kept;
}

const stateKeyOf = (type: string, stateKey: string): string => `${type}\u0000${stateKey}`;

/** Rooms, their events and the global stream position. */
export class RoomStore {
  /** Emits "room" after every appended event. */
  readonly changes = new EventEmitter();
  private readonly rooms = new Map<string, Room>();
  private readonly byId = new Map<string, StoredEvent>();
  private readonly baseNow: () => number;
  private readonly serverName: string;
  private position = 0;
  private clockOffsetMs = 0;
  private lastAutoTs = Number.NEGATIVE_INFINITY;
  private counter = 0;

  /** What the profile's events look like: with or without `unsigned`, and the version of new rooms. */
  private readonly shape: { readonly unsigned: boolean; readonly roomVersion: string };

  constructor(serverName: string, baseNow: () => number, shape: { readonly unsigned: boolean; readonly roomVersion: string } = { unsigned: true, roomVersion: "10" }) {
    this.serverName = serverName;
    this.baseNow = baseNow;
    this.shape = shape;
    this.changes.setMaxListeners(0);
  }

  /** Server clock: base clock plus the adjustable offset. */
  now(): number {
    return this.baseNow() + this.clockOffsetMs;
  }

  /** Shifts the server clock; the monotonic timestamp floor restarts so "old" events can be made. */
  setClockOffset(ms: number): void {
    this.clockOffsetMs = ms;
    this.lastAutoTs = Number.NEGATIVE_INFINITY;
  }

  /** Position of the newest event (0 before any event). */
  get streamPosition(): number {
    return this.position;
  }

  /** Whether a room with this id exists. */
  hasRoom(roomId: string): boolean {
    return this.rooms.has(roomId);
  }

  /** Creates a room: create event and power levels by the first member, then every member's join. */
  createRoom(roomId: string, members: readonly MemberSpec[]): void {
    if (this.rooms.has(roomId)) throw new Error(`fake homeserver: room ${roomId} exists`);
    const specs = members.map((m) => (typeof m === "string" ? { userId: m } : m));
    const creator = specs[0]?.userId;
    if (creator === undefined) throw new Error("fake homeserver: a room needs at least one member");
    this.rooms.set(roomId, { events: [], state: new Map() });
    this.append({ roomId, type: "m.room.create", sender: creator, stateKey: "", content: { creator, room_version: this.shape.roomVersion } });
    this.join(roomId, creator, specs[0]?.displayName);
    const users: Record<string, number> = { [creator]: 100 };
    this.append({ roomId, type: "m.room.power_levels", sender: creator, stateKey: "", content: { users, users_default: 0, events_default: 0, state_default: 50, redact: 50 } });
    this.append({ roomId, type: "m.room.join_rules", sender: creator, stateKey: "", content: { join_rule: "invite" } });
    this.append({ roomId, type: "m.room.history_visibility", sender: creator, stateKey: "", content: { history_visibility: "shared" } });
    for (const spec of specs.slice(1)) this.join(roomId, spec.userId, spec.displayName);
  }

  /** Appends `userId`'s join (display name defaults to the localpart). */
  join(roomId: string, userId: string, displayName?: string): StoredEvent {
    const displayname = displayName ?? userId.slice(1).split(":")[0] ?? userId;
    return this.append({ roomId, type: "m.room.member", sender: userId, stateKey: userId, content: { membership: "join", displayname } });
  }

  /** Appends an event to the global stream; applies state and redactions. */
  append(input: AppendInput): StoredEvent {
    const room = this.rooms.get(input.roomId);
    if (room === undefined) throw new Error(`fake homeserver: unknown room ${input.roomId}`);
    const ts = input.originServerTs ?? Math.max(this.now(), this.lastAutoTs + 1);
    if (input.originServerTs === undefined) this.lastAutoTs = ts;
    const key = input.stateKey === undefined ? null : stateKeyOf(input.type, input.stateKey);
    const previous = key === null ? undefined : room.state.get(key);
    const event: StoredEvent = {
      pos: ++this.position,
      roomId: input.roomId,
      eventId: this.newEventId(),
      type: input.type,
      sender: input.sender,
      ts,
      stateKey: input.stateKey,
      content: structuredClone(input.content),
      redacts: input.redacts,
      prevContent: previous?.content,
      replacesState: previous?.eventId,
      txn: input.txn ?? null,
      redactedBy: null,
    };
    room.events.push(event);
    this.byId.set(event.eventId, event);
    if (key !== null) room.state.set(key, event);
    if (event.type === "m.room.redaction" && event.redacts !== undefined) {
      const target = this.byId.get(event.redacts);
      if (target !== undefined && target.roomId === event.roomId && target.redactedBy === null) target.redactedBy = event;
    }
    this.changes.emit("room", event);
    return event;
  }

  private newEventId(): string {
    this.counter += 1;
    const digest = createHash("sha256").update(`${this.serverName}|${this.counter}|`).update(randomBytes(16)).digest("base64url");
    return `$${digest.slice(0, 43)}`;
  }

  /** All events of a room in stream order. */
  events(roomId: string): readonly StoredEvent[] {
    return this.rooms.get(roomId)?.events ?? [];
  }

  /** An event by id, in any room. */
  get(eventId: string): StoredEvent | undefined {
    return this.byId.get(eventId);
  }

  /** `userId`'s membership after the event at `pos` (inclusive); null when never a member. */
  membershipAt(roomId: string, userId: string, pos: number = Number.POSITIVE_INFINITY): string | null {
    let membership: string | null = null;
    for (const event of this.events(roomId)) {
      if (event.pos > pos) break;
      if (event.type === "m.room.member" && event.stateKey === userId) {
        const value = event.content["membership"];
        membership = typeof value === "string" ? value : null;
      }
    }
    return membership;
  }

  /** Rooms `userId` is joined to now. */
  joinedRooms(userId: string): string[] {
    return [...this.rooms.keys()].filter((roomId) => this.membershipAt(roomId, userId) === "join");
  }

  /** Rooms `userId` has ever had a membership event in. */
  roomsWithMembership(userId: string): string[] {
    return [...this.rooms.keys()].filter((roomId) => this.membershipAt(roomId, userId) !== null);
  }

  /**
   * Highest position `userId` may see in `roomId` under history visibility
   * "shared": everything for a current member, up to their leave for a former
   * member, nothing (-1) for anyone else.
   */
  visibleUpTo(roomId: string, userId: string): number {
    let joinedOnce = false;
    let limit = -1;
    for (const event of this.events(roomId)) {
      if (event.type !== "m.room.member" || event.stateKey !== userId) continue;
      const membership = event.content["membership"];
      if (membership === "join") {
        joinedOnce = true;
        limit = Number.POSITIVE_INFINITY;
      } else if (joinedOnce && limit === Number.POSITIVE_INFINITY) {
        limit = event.pos;
      }
    }
    return limit;
  }

  /** Latest state event per (type, state_key) among events with `after < pos < before`. */
  stateBetween(roomId: string, after: number, before: number): StoredEvent[] {
    const latest = new Map<string, StoredEvent>();
    for (const event of this.events(roomId)) {
      if (event.pos <= after || event.pos >= before || event.stateKey === undefined) continue;
      latest.set(stateKeyOf(event.type, event.stateKey), event);
    }
    return [...latest.values()];
  }

  /** The ClientEvent format of `event` as `viewer` sees it. */
  toClient(event: StoredEvent, viewer: Viewer | null, withRoomId = true): ClientEvent {
    const unsigned: Record<string, unknown> = {};
    // Dendrite sends no unsigned data (no age, prev_content, redacted_because), only the sender's transaction id.
    if (this.shape.unsigned) {
      unsigned["age"] = Math.max(0, this.now() - event.ts);
      if (event.prevContent !== undefined) unsigned["prev_content"] = structuredClone(event.prevContent);
      if (event.replacesState !== undefined) unsigned["replaces_state"] = event.replacesState;
      if (event.redactedBy !== null) unsigned["redacted_because"] = this.toClient(event.redactedBy, null, true);
    }
    if (event.txn !== null && viewer !== null && event.txn.userId === viewer.userId && event.txn.deviceId === viewer.deviceId) {
      unsigned["transaction_id"] = event.txn.txnId;
    }
    const content = event.redactedBy === null ? structuredClone(event.content) : redactedContent(event.type, event.content);
    return {
      content,
      event_id: event.eventId,
      origin_server_ts: event.ts,
      ...(withRoomId ? { room_id: event.roomId } : {}),
      sender: event.sender,
      ...(event.stateKey === undefined ? {} : { state_key: event.stateKey }),
      type: event.type,
      ...(event.redacts === undefined ? {} : { redacts: event.redacts }),
      ...(Object.keys(unsigned).length === 0 && !this.shape.unsigned ? {} : { unsigned }),
    };
  }
}
