// `GET /sync`: initial and incremental responses over the global stream, the
// long-poll, filters (inline or stored) and the per-profile quirks.

import { errorReply, okReply } from "./reply.ts";
import type { Reply } from "./reply.ts";
import type { Session } from "./accounts.ts";
import type { KeyServer } from "./keys.ts";
import type { RoomStore, StoredEvent, Viewer } from "./store.ts";
import { defaultFilter, eventAllowed, parseFilter, roomAllowed } from "./sync-filter.ts";
import type { SyncFilter } from "./sync-filter.ts";
import { pageToken, parseToken, syncToken } from "./tokens.ts";
import { traitsOf } from "./traits.ts";
import type { HomeserverProfile } from "./types.ts";

/** Longest long-poll either profile holds a request for. */
export const MAX_SYNC_TIMEOUT_MS = 30_000;

interface TimelinePart {
  readonly events: readonly StoredEvent[];
  readonly limited: boolean;
  readonly prevBatch: string | undefined;
}

/** Builds sync responses and remembers filters and each device's last response. */
export class SyncService {
  private readonly store: RoomStore;
  private readonly profile: HomeserverProfile;
  private readonly filters = new Map<string, unknown>();
  private readonly lastBodies = new Map<string, unknown>();
  /** Joined rooms that appeared in any `/sync` response served to a user. */
  private readonly served = new Map<string, Set<string>>();
  private filterCounter = 0;
  private readonly keys: KeyServer | null;

  constructor(store: RoomStore, profile: HomeserverProfile, keys: KeyServer | null = null) {
    this.store = store;
    this.profile = profile;
    this.keys = keys;
  }

  /** `POST /user/{userId}/filter`. */
  createFilter(session: Session, pathUserId: string, body: unknown): Reply {
    if (pathUserId !== session.userId) return errorReply(403, "M_FORBIDDEN", "Cannot create filters for other users");
    if (parseFilter(this.profile, body) === null) return errorReply(400, "M_BAD_JSON", "Invalid filter");
    this.filterCounter += 1;
    const filterId = String(this.filterCounter);
    this.filters.set(`${session.userId}\u0000${filterId}`, body);
    return okReply({ filter_id: filterId });
  }

  /** The response last served to this device (for the `repeatLastSync` fault). */
  lastBody(session: Session): unknown {
    return this.lastBodies.get(`${session.userId}\u0000${session.deviceId}`);
  }

  /** Joined rooms that appeared in a `/sync` response served to `userId` so far. */
  roomsServedTo(userId: string): ReadonlySet<string> {
    return this.served.get(userId) ?? new Set();
  }

  /** Whether an unknown `since` gets a full response (Continuwuity) instead of `M_UNKNOWN_POS`. */
  answersUnknownSinceInFull(): boolean {
    return traitsOf(this.profile).unknownSinceGetsFullResponse;
  }

  /** Handles one `/sync` request, long-polling until content, deadline or abort. */
  async handle(session: Session, query: Readonly<Record<string, string>>, signal: AbortSignal): Promise<Reply> {
    const since = this.parseSince(query["since"]);
    if (since === "invalid") return errorReply(400, "M_UNKNOWN", "Invalid stream token");
    const filter = this.resolveFilter(session, query["filter"]);
    if (filter === null) return errorReply(400, "M_BAD_JSON", "Invalid filter");
    const timeoutMs = this.parseTimeout(query["timeout"]);
    if (timeoutMs === null) return errorReply(400, "M_INVALID_PARAM", "Invalid timeout");
    const immediate = query["full_state"] === "true" || (since === null && this.profile !== "continuwuity");
    const deadline = Date.now() + timeoutMs;
    const viewer: Viewer = { userId: session.userId, deviceId: session.deviceId };
    const device = this.keys === null ? null : { userId: session.userId, deviceId: session.deviceId };
    const pending = (): boolean => device !== null && this.keys !== null && this.keys.hasPending(device);
    let built = this.build(viewer, since, filter);
    while (!built.hasRooms && !pending() && !immediate && !signal.aborted && Date.now() < deadline) {
      await this.waitForRoomEvent(deadline - Date.now(), signal);
      built = this.build(viewer, since, filter);
    }
    // The device part (to-device events, key counts, device lists): encrypted rooms.
    if (device !== null && this.keys !== null && this.keys.knows(device)) Object.assign(built.body, this.keys.syncPart(device));
    this.lastBodies.set(`${session.userId}\u0000${session.deviceId}`, built.body);
    const joined = ((built.body["rooms"] as Record<string, unknown> | undefined)?.["join"] ?? {}) as Record<string, unknown>;
    const seen = this.served.get(session.userId) ?? new Set<string>();
    for (const roomId of Object.keys(joined)) seen.add(roomId);
    this.served.set(session.userId, seen);
    return okReply(built.body);
  }

  private parseSince(raw: string | undefined): number | null | "invalid" {
    if (raw === undefined) return null;
    const bounds = parseToken(this.profile, raw);
    if (bounds !== null) return bounds.after;
    // Continuwuity silently treats an unparsable token as an initial sync.
    return this.profile === "continuwuity" ? null : "invalid";
  }

  private parseTimeout(raw: string | undefined): number | null {
    if (raw === undefined) return this.profile === "continuwuity" ? MAX_SYNC_TIMEOUT_MS : 0;
    if (!/^\d{1,12}$/.test(raw)) return null;
    return Math.min(Number(raw), MAX_SYNC_TIMEOUT_MS);
  }

  private resolveFilter(session: Session, raw: string | undefined): SyncFilter | null {
    if (raw === undefined) return defaultFilter(this.profile);
    if (raw.trimStart().startsWith("{")) {
      try {
        return parseFilter(this.profile, JSON.parse(raw));
      } catch {
        return null;
      }
    }
    const stored = this.filters.get(`${session.userId}\u0000${raw}`);
    if (stored !== undefined) return parseFilter(this.profile, stored);
    return this.profile === "continuwuity" ? defaultFilter(this.profile) : null;
  }

  private waitForRoomEvent(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.store.changes.off("room", finish);
        signal.removeEventListener("abort", finish);
        resolve();
      };
      const timer = setTimeout(finish, Math.max(0, ms));
      this.store.changes.on("room", finish);
      signal.addEventListener("abort", finish, { once: true });
    });
  }

  /** One sync response body for `viewer` from `since` (null = initial). */
  build(viewer: Viewer, since: number | null, filter: SyncFilter): { body: Record<string, unknown>; hasRooms: boolean } {
    const join: Record<string, unknown> = {};
    const leave: Record<string, unknown> = {};
    const invite: Record<string, unknown> = {};
    for (const roomId of this.store.roomsWithMembership(viewer.userId)) {
      if (traitsOf(this.profile).appliesFilterRoomList && !roomAllowed(filter, roomId)) continue;
      const now = this.store.membershipAt(roomId, viewer.userId);
      if (now === "join") {
        const entry = this.joinedRoom(viewer, roomId, since, filter);
        if (entry !== null) join[roomId] = entry;
      } else if (now === "invite") {
        if (since === null || this.store.membershipAt(roomId, viewer.userId, since) !== "invite") invite[roomId] = this.invitedRoom(viewer, roomId);
      } else if (since !== null && this.store.membershipAt(roomId, viewer.userId, since) === "join") {
        leave[roomId] = this.leftRoom(viewer, roomId, since, filter);
      }
    }
    const rooms: Record<string, unknown> = {};
    if (Object.keys(join).length > 0) rooms["join"] = join;
    if (Object.keys(leave).length > 0) rooms["leave"] = leave;
    if (Object.keys(invite).length > 0) rooms["invite"] = invite;
    const hasRooms = Object.keys(rooms).length > 0;
    const body: Record<string, unknown> = { next_batch: syncToken(this.profile, this.store.streamPosition) };
    // One-time key count and unused fallback key types as the profile sends them (keys.ts).
    if (this.keys !== null && viewer.deviceId !== null) Object.assign(body, this.keys.countsPart({ userId: viewer.userId, deviceId: viewer.deviceId }));
    else if (this.profile === "synapse") Object.assign(body, { device_one_time_keys_count: { signed_curve25519: 0 }, device_unused_fallback_key_types: [] });
    if (hasRooms) body["rooms"] = rooms;
    return { body, hasRooms };
  }

  private timeline(candidates: readonly StoredEvent[], limit: number, fallbackPos: number, forceLimited: boolean): TimelinePart {
    const events = limit === 0 ? [] : candidates.slice(-limit);
    const first = events[0];
    let prevBatch: string | undefined;
    if (first !== undefined) prevBatch = pageToken(this.profile, first.pos);
    else if (this.profile !== "continuwuity") prevBatch = syncToken(this.profile, fallbackPos);
    return { events, limited: forceLimited || candidates.length > events.length, prevBatch };
  }

  private joinedRoom(viewer: Viewer, roomId: string, since: number | null, filter: SyncFilter): Record<string, unknown> | null {
    const all = this.store.events(roomId).filter((e) => this.profile === "continuwuity" || eventAllowed(filter, e));
    const newlyJoined = since === null || this.store.membershipAt(roomId, viewer.userId, since) !== "join";
    const candidates = newlyJoined ? all : all.filter((e) => e.pos > since);
    if (!newlyJoined && candidates.length === 0) return null;
    // Continuwuity marks the first sync after a join limited, whatever the count.
    const forceLimited = newlyJoined && this.profile === "continuwuity";
    const part = this.timeline(candidates, filter.timelineLimit, this.store.streamPosition, forceLimited);
    const timelineStart = part.events[0]?.pos ?? this.store.streamPosition + 1;
    let state: StoredEvent[] = [];
    if (newlyJoined) state = this.store.stateBetween(roomId, 0, timelineStart);
    else if (part.limited) state = this.store.stateBetween(roomId, since ?? 0, timelineStart);
    if (filter.lazyLoadMembers) {
      const senders = new Set(part.events.map((e) => e.sender));
      state = state.filter((e) => e.type !== "m.room.member" || (e.stateKey !== undefined && senders.has(e.stateKey)));
    }
    return {
      timeline: this.timelineJson(viewer, part),
      state: { events: state.map((e) => this.store.toClient(e, viewer, false)) },
      account_data: { events: [] },
      ephemeral: { events: [] },
      unread_notifications: { notification_count: 0, highlight_count: 0 },
      summary: {},
    };
  }

  /** Stripped state of an invitation: create, join rules and the invite itself. */
  private invitedRoom(viewer: Viewer, roomId: string): Record<string, unknown> {
    const state = this.store.stateBetween(roomId, 0, Number.POSITIVE_INFINITY)
      .filter((e) => ["m.room.create", "m.room.join_rules", "m.room.name"].includes(e.type) || (e.type === "m.room.member" && e.stateKey === viewer.userId));
    return { invite_state: { events: state.map((e) => ({ type: e.type, state_key: e.stateKey, sender: e.sender, content: structuredClone(e.content) })) } };
  }

  private leftRoom(viewer: Viewer, roomId: string, since: number, filter: SyncFilter): Record<string, unknown> {
    const leavePos = this.store.visibleUpTo(roomId, viewer.userId);
    const candidates = this.store.events(roomId).filter((e) => e.pos > since && e.pos <= leavePos);
    const part = this.timeline(candidates, filter.timelineLimit, since, false);
    return { timeline: this.timelineJson(viewer, part), state: { events: [] }, account_data: { events: [] } };
  }

  private timelineJson(viewer: Viewer, part: TimelinePart): Record<string, unknown> {
    const json: Record<string, unknown> = { events: part.events.map((e) => this.store.toClient(e, viewer, false)) };
    // Continuwuity leaves `limited` out when it is false.
    if (part.limited || !traitsOf(this.profile).omitsLimitedWhenFalse) json["limited"] = part.limited;
    if (part.prevBatch !== undefined) json["prev_batch"] = part.prevBatch;
    return json;
  }
}
