// Room writes by clients: `PUT /send` with transaction idempotency, `PUT /typing`
// with each profile's timeout handling, and `GET /joined_rooms`.

import type { Session } from "./accounts.ts";
import { errorReply, isObject, okReply } from "./reply.ts";
import type { Reply } from "./reply.ts";
import { maySend } from "./room-state.ts";
import type { RoomStore, StoredEvent } from "./store.ts";
import { traitsOf } from "./traits.ts";
import { retryReply } from "./reply.ts";
import type { HomeserverProfile, MessageRateLimit, TypingRecord } from "./types.ts";

/** Continuwuity's default typing timeout clamp (typing_client_timeout_min_s / max_s). */
export const CONTINUWUITY_TYPING_MIN_MS = 15_000;
/** Upper end of Continuwuity's typing clamp. */
export const CONTINUWUITY_TYPING_MAX_MS = 45_000;
/** Synapse's typing timeout ceiling. */
export const SYNAPSE_TYPING_MAX_MS = 120_000;

/** Send and typing handlers plus what tests observe of them. */
export class WriteEndpoints {
  /** Every typing change applied, in order. */
  readonly typing: TypingRecord[] = [];
  private readonly store: RoomStore;
  private readonly profile: HomeserverProfile;
  private readonly maxEventBytes: number;
  private readonly transactions = new Map<string, string>();
  private readonly onTyping: () => void;
  private readonly rateLimit: MessageRateLimit | null;
  /** Per user: the bucket's fill (actions taken, leaking at `perSecond`) and when it was last updated. */
  private readonly buckets = new Map<string, { fill: number; atMs: number }>();
  /** Sends refused by the rate limit. */
  rateLimited = 0;

  constructor(store: RoomStore, profile: HomeserverProfile, maxEventBytes: number, onTyping: () => void, rateLimit: MessageRateLimit | null = null) {
    this.store = store;
    this.profile = profile;
    this.maxEventBytes = maxEventBytes;
    this.onTyping = onTyping;
    this.rateLimit = rateLimit;
  }

  // Synapse's leaky bucket: up to burstCount actions at once, then perSecond; the refusal says when the next one fits.
  private limited(userId: string): Reply | null {
    if (this.rateLimit === null) return null;
    const now = this.store.now();
    const bucket = this.buckets.get(userId) ?? { fill: 0, atMs: now };
    bucket.fill = Math.max(0, bucket.fill - ((now - bucket.atMs) / 1000) * this.rateLimit.perSecond);
    bucket.atMs = now;
    this.buckets.set(userId, bucket);
    if (bucket.fill + 1 > this.rateLimit.burstCount) {
      this.rateLimited += 1;
      const waitMs = Math.ceil(((bucket.fill + 1 - this.rateLimit.burstCount) / this.rateLimit.perSecond) * 1000);
      return retryReply(429, "M_LIMIT_EXCEEDED", "Too Many Requests", waitMs);
    }
    bucket.fill += 1;
    return null;
  }

  /**
   * Synapse scopes a transaction to (device, request path); Continuwuity to
   * (user, device, txnId) with no room check; Dendrite to
   * (access token, request path), so a new login's token repeats nothing.
   */
  private transactionKey(session: Session, roomId: string, eventType: string, txnId: string): string {
    switch (traitsOf(this.profile).txnScope) {
      case "device_path":
        return [session.userId, session.deviceId, roomId, eventType, txnId].join("\u0000");
      case "device":
        return [session.userId, session.deviceId, txnId].join("\u0000");
      case "access_token":
        return [session.userId, session.accessToken, roomId, eventType, txnId].join("\u0000");
    }
  }

  /** `PUT /rooms/{roomId}/send/{eventType}/{txnId}`. */
  send(session: Session, roomId: string, eventType: string, txnId: string, body: unknown): Reply {
    const key = this.transactionKey(session, roomId, eventType, txnId);
    const existing = this.transactions.get(key);
    if (existing !== undefined) return okReply({ event_id: existing });
    if (!isObject(body)) return errorReply(400, "M_NOT_JSON", "Content not JSON.");
    if (!this.store.hasRoom(roomId) || this.store.membershipAt(roomId, session.userId) !== "join") {
      return errorReply(403, "M_FORBIDDEN", `User ${session.userId} not in room ${roomId}`);
    }
    if (!maySend(this.store, roomId, session.userId, eventType)) {
      return errorReply(403, "M_FORBIDDEN", `You don't have permission to post that to the room. user_level < send_level`);
    }
    const size = Buffer.byteLength(JSON.stringify({ type: eventType, room_id: roomId, sender: session.userId, content: body }));
    if (size > this.maxEventBytes) return errorReply(413, "M_TOO_LARGE", "event too large");
    const limited = this.limited(session.userId);
    if (limited !== null) return limited;
    const event = this.store.append({ roomId, type: eventType, sender: session.userId, content: body, txn: { userId: session.userId, deviceId: session.deviceId, txnId } });
    this.transactions.set(key, event.eventId);
    return okReply({ event_id: event.eventId });
  }

  /** Events created under `txnId` (any user, device or room). */
  sentByTxn(txnId: string): StoredEvent[] {
    const ids = new Set<string>();
    for (const [key, eventId] of this.transactions) if (key.endsWith(`\u0000${txnId}`)) ids.add(eventId);
    return [...ids].map((id) => this.store.get(id)).filter((e): e is StoredEvent => e !== undefined);
  }

  /** `PUT /rooms/{roomId}/typing/{userId}`. */
  setTyping(session: Session, roomId: string, userId: string, body: unknown): Reply {
    if (userId !== session.userId) {
      return this.profile !== "continuwuity"
        ? errorReply(400, "M_FORBIDDEN", "Cannot set another user's typing state")
        : errorReply(403, "M_FORBIDDEN", "You cannot update typing status of other users.");
    }
    if (!isObject(body) || typeof body["typing"] !== "boolean") return errorReply(400, "M_BAD_JSON", "Invalid typing body");
    const rawTimeout = body["timeout"];
    if (rawTimeout !== undefined && (typeof rawTimeout !== "number" || !Number.isFinite(rawTimeout) || rawTimeout < 0)) {
      return errorReply(400, "M_BAD_JSON", "Invalid timeout");
    }
    const requested = rawTimeout ?? null;
    if (this.profile === "continuwuity" && body["typing"] && requested === null) return errorReply(400, "M_BAD_JSON", "Missing timeout");
    if (this.store.membershipAt(roomId, session.userId) !== "join") {
      return errorReply(403, "M_FORBIDDEN", this.profile !== "continuwuity" ? `User ${userId} not in room ${roomId}` : "You are not in this room.");
    }
    let effective: number | null = null;
    if (body["typing"]) {
      effective =
        this.profile !== "continuwuity"
          ? Math.min(requested ?? 30_000, SYNAPSE_TYPING_MAX_MS)
          : Math.min(Math.max(requested ?? 0, CONTINUWUITY_TYPING_MIN_MS), CONTINUWUITY_TYPING_MAX_MS);
    }
    this.typing.push({ roomId, userId, typing: body["typing"], requestedTimeoutMs: requested, effectiveTimeoutMs: effective, at: this.store.now() });
    this.onTyping();
    return okReply({});
  }

  /** Whether `userId` is typing in `roomId` now (last change was "typing" and has not timed out). */
  isTyping(roomId: string, userId: string): boolean {
    const last = this.typing.findLast((r) => r.roomId === roomId && r.userId === userId);
    return last !== undefined && last.typing && last.effectiveTimeoutMs !== null && last.at + last.effectiveTimeoutMs > this.store.now();
  }

  /** `GET /joined_rooms`. */
  joinedRooms(session: Session): Reply {
    return okReply({ joined_rooms: this.store.joinedRooms(session.userId) });
  }

  /** `GET /rooms/{room}/members`: for a member, each user's current member event, filtered by `membership` / `not_membership`. */
  members(session: Session, roomId: string, query: Readonly<Record<string, string>>): Reply {
    if (this.store.membershipAt(roomId, session.userId) !== "join") return errorReply(403, "M_FORBIDDEN", "You are not in this room");
    const latest = new Map<string, { type: string; state_key: string; sender: string; content: Readonly<Record<string, unknown>> }>();
    for (const event of this.store.events(roomId)) {
      if (event.type !== "m.room.member" || event.stateKey === undefined) continue;
      latest.set(event.stateKey, { type: event.type, state_key: event.stateKey, sender: event.sender, content: event.content });
    }
    const chunk = [...latest.values()].filter((event) => {
      const membership = event.content["membership"];
      return (query["membership"] === undefined || membership === query["membership"]) && (query["not_membership"] === undefined || membership !== query["not_membership"]);
    });
    return okReply({ chunk });
  }

  /** `GET /rooms/{room}/joined_members`: for a member, every joined member (display names left out). */
  joinedMembers(session: Session, roomId: string): Reply {
    if (this.store.membershipAt(roomId, session.userId) !== "join") return errorReply(403, "M_FORBIDDEN", "You are not in this room");
    const joined: Record<string, Record<string, never>> = {};
    for (const event of this.store.events(roomId)) {
      if (event.type !== "m.room.member" || event.stateKey === undefined) continue;
      if (this.store.membershipAt(roomId, event.stateKey) === "join") joined[event.stateKey] = {};
    }
    return okReply({ joined });
  }
}
