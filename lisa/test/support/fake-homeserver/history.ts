// Read-only room history: `/messages`, `/context`, `/event`, `/relations`.
// Tokens are exclusive stream positions (see tokens.ts).

import type { Session } from "./accounts.ts";
import { errorReply, isObject, okReply } from "./reply.ts";
import type { Reply } from "./reply.ts";
import type { RoomStore, StoredEvent, Viewer } from "./store.ts";
import { eventAllowed, parseRoomEventFilter } from "./sync-filter.ts";
import type { SyncFilter } from "./sync-filter.ts";
import { pageToken, parseToken, syncToken } from "./tokens.ts";
import type { TokenBounds } from "./tokens.ts";
import { traitsOf } from "./traits.ts";
import type { HomeserverProfile } from "./types.ts";

/** Largest `/context` limit honoured (Continuwuity's cap; larger requests are cut). */
export const CONTEXT_LIMIT_CAP = 100;

type Query = Readonly<Record<string, string>>;

/** Parses a non-negative integer `limit`; undefined -> fallback; capped. Null when malformed. */
function parseLimit(raw: string | undefined, fallback: number, cap: number): number | null {
  if (raw === undefined) return fallback;
  if (!/^\d{1,9}$/.test(raw)) return null;
  return Math.min(Number(raw), cap);
}

/** Handlers for history reads. */
export class HistoryEndpoints {
  private readonly store: RoomStore;
  private readonly profile: HomeserverProfile;

  constructor(store: RoomStore, profile: HomeserverProfile) {
    this.store = store;
    this.profile = profile;
  }

  private viewer(session: Session): Viewer {
    return { userId: session.userId, deviceId: session.deviceId };
  }

  private notInRoom(session: Session, roomId: string): Reply {
    return errorReply(403, "M_FORBIDDEN", `User ${session.userId} not in room ${roomId}`);
  }

  /** Visible, filter-passing events of a room in stream order. */
  private visibleEvents(roomId: string, limitPos: number, filter: SyncFilter): StoredEvent[] {
    return this.store.events(roomId).filter((e) => e.pos <= limitPos && eventAllowed(filter, e));
  }

  /** Bounds of a `from` token; an absent one starts at the newest (b) or oldest (f) end. Null when malformed. */
  private bounds(raw: string | undefined, dir: "b" | "f"): TokenBounds | null {
    if (raw !== undefined) return parseToken(this.profile, raw);
    return dir === "b" ? { before: Number.POSITIVE_INFINITY, after: Number.POSITIVE_INFINITY } : { before: 0, after: 0 };
  }

  /** `GET /rooms/{roomId}/messages`. */
  messages(session: Session, roomId: string, query: Query): Reply {
    const dir = query["dir"];
    if (dir !== "b" && dir !== "f") return errorReply(400, "M_INVALID_PARAM", "Query parameter \"dir\" must be one of [\"b\", \"f\"]");
    const limit = parseLimit(query["limit"], 10, this.profile !== "continuwuity" ? 1000 : 100);
    const filter = parseRoomEventFilter(query["filter"]);
    if (limit === null || filter === null) return errorReply(400, "M_INVALID_PARAM", "Invalid limit or filter");
    const from = this.bounds(query["from"], dir);
    const to = query["to"] === undefined ? null : parseToken(this.profile, query["to"]);
    if (from === null || (query["to"] !== undefined && to === null)) return errorReply(400, "M_INVALID_PARAM", "Invalid pagination token");
    const visibleUpTo = this.store.visibleUpTo(roomId, session.userId);
    // Continuwuity answers a non-member of an existing room with an empty page; Synapse refuses.
    if (visibleUpTo < 0 && (this.profile !== "continuwuity" || !this.store.hasRoom(roomId))) return this.notInRoom(session, roomId);
    const events = this.visibleEvents(roomId, visibleUpTo, filter);
    const ordered =
      dir === "b"
        ? events.filter((e) => e.pos < from.before && (to === null || e.pos > to.after)).reverse()
        : events.filter((e) => e.pos > from.after && (to === null || e.pos < to.before));
    const chunk = ordered.slice(0, limit);
    const start = query["from"] ?? (dir === "b" ? syncToken(this.profile, this.store.streamPosition) : pageToken(this.profile, 0));
    const body: Record<string, unknown> = { chunk: chunk.map((e) => this.store.toClient(e, this.viewer(session))), start };
    const last = chunk.at(-1);
    if (last !== undefined) body["end"] = pageToken(this.profile, last.pos);
    if (filter.lazyLoadMembers && chunk.length > 0) body["state"] = this.memberState(session, roomId, chunk, Number.POSITIVE_INFINITY);
    return okReply(body);
  }

  /** Current member events (as of `beforePos`, exclusive) of the senders of `events`. */
  private memberState(session: Session, roomId: string, events: readonly StoredEvent[], beforePos: number): unknown[] {
    const senders = new Set(events.map((e) => e.sender));
    return this.store
      .stateBetween(roomId, 0, beforePos)
      .filter((e) => e.type === "m.room.member" && e.stateKey !== undefined && senders.has(e.stateKey))
      .map((e) => this.store.toClient(e, this.viewer(session)));
  }

  /** The anchor of `/context` and `/event`, or the error reply for it. */
  private anchor(session: Session, roomId: string, eventId: string): { event: StoredEvent; visibleUpTo: number } | Reply {
    const visibleUpTo = this.store.visibleUpTo(roomId, session.userId);
    const event = this.store.get(eventId);
    if (event === undefined || event.roomId !== roomId || event.pos > visibleUpTo) return errorReply(404, "M_NOT_FOUND", "Event not found.");
    return { event, visibleUpTo };
  }

  /** `GET /rooms/{roomId}/event/{eventId}`: 404 when absent or not visible to the requester. */
  event(session: Session, roomId: string, eventId: string): Reply {
    const found = this.anchor(session, roomId, eventId);
    if ("status" in found) return found;
    return okReply(this.store.toClient(found.event, this.viewer(session)));
  }

  /** `GET /rooms/{roomId}/context/{eventId}`: limit split before/after, events_before newest first. */
  context(session: Session, roomId: string, eventId: string, query: Query): Reply {
    const limit = parseLimit(query["limit"], 10, CONTEXT_LIMIT_CAP);
    const filter = parseRoomEventFilter(query["filter"]);
    if (limit === null || filter === null) return errorReply(400, "M_INVALID_PARAM", "Invalid limit or filter");
    if (this.profile !== "continuwuity" && this.store.visibleUpTo(roomId, session.userId) < 0) return this.notInRoom(session, roomId);
    const found = this.anchor(session, roomId, eventId);
    if ("status" in found) return found;
    const { event, visibleUpTo } = found;
    // Synapse: floor(limit/2) before, the rest after; Continuwuity: limit/2 on each side.
    const beforeCount = Math.floor(limit / 2);
    const afterCount = this.profile !== "continuwuity" ? limit - beforeCount : Math.floor(limit / 2);
    const events = this.visibleEvents(roomId, visibleUpTo, filter);
    const before = events.filter((e) => e.pos < event.pos).reverse().slice(0, beforeCount);
    const after = events.filter((e) => e.pos > event.pos).slice(0, afterCount);
    const lastPos = after.at(-1)?.pos ?? event.pos;
    let state = this.store.stateBetween(roomId, 0, lastPos + 1);
    if (filter.lazyLoadMembers) {
      const senders = new Set([event, ...before, ...after].map((e) => e.sender));
      state = state.filter((e) => e.type !== "m.room.member" || (e.stateKey !== undefined && senders.has(e.stateKey)));
    }
    const viewer = this.viewer(session);
    return okReply({
      start: pageToken(this.profile, before.at(-1)?.pos ?? event.pos),
      end: pageToken(this.profile, lastPos),
      events_before: before.map((e) => this.store.toClient(e, viewer)),
      event: this.store.toClient(event, viewer),
      events_after: after.map((e) => this.store.toClient(e, viewer)),
      state: state.map((e) => this.store.toClient(e, viewer)),
    });
  }

  /** `GET /_matrix/client/v1/rooms/{roomId}/relations/{eventId}[/{relType}[/{eventType}]]`. */
  relations(session: Session, roomId: string, rootId: string, relType: string | undefined, eventType: string | undefined, query: Query): Reply {
    const dir = query["dir"] ?? "b";
    if (dir !== "b" && dir !== "f") return errorReply(400, "M_INVALID_PARAM", "Invalid dir");
    const limit = parseLimit(query["limit"], this.profile !== "continuwuity" ? 5 : 30, this.profile !== "continuwuity" ? 1000 : 100);
    const from = this.bounds(query["from"], dir);
    if (limit === null || from === null) return errorReply(400, "M_INVALID_PARAM", "Invalid limit or pagination token");
    if (this.profile !== "continuwuity" && this.store.visibleUpTo(roomId, session.userId) < 0) return this.notInRoom(session, roomId);
    const found = this.anchor(session, roomId, rootId);
    if ("status" in found) return found;
    const related = this.store.events(roomId).filter((e) => {
      if (e.pos > found.visibleUpTo || e.redactedBy !== null || (eventType !== undefined && e.type !== eventType)) return false;
      const relation = e.content["m.relates_to"];
      return isObject(relation) && relation["event_id"] === rootId && (relType === undefined || relation["rel_type"] === relType);
    });
    const ordered = dir === "b" ? related.filter((e) => e.pos < from.before).reverse() : related.filter((e) => e.pos > from.after);
    const chunk = ordered.slice(0, limit);
    const body: Record<string, unknown> = { chunk: chunk.map((e) => this.store.toClient(e, this.viewer(session))) };
    // Synapse: next_batch only when more remain; Continuwuity: on every non-empty page, the last one too.
    const hasMore = traitsOf(this.profile).relationsNextBatchOnLastPage ? chunk.length > 0 : ordered.length > chunk.length;
    const last = chunk.at(-1);
    if (hasMore && last !== undefined) body["next_batch"] = pageToken(this.profile, last.pos);
    if (query["from"] !== undefined) body["prev_batch"] = query["from"];
    return okReply(body);
  }
}
