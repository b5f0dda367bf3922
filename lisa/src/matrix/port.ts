import type { Result } from "../errors.ts";
import type { MatrixError } from "./errors.ts";

// The narrow Matrix ports the rest of Lisa depends on. The HTTP client in this
// folder implements them; tests implement them with fakes.

/** A Matrix client event as received (validated loosely: the fields Lisa reads). */
export interface RawEvent {
  readonly event_id: string;
  readonly type: string;
  readonly sender: string;
  readonly origin_server_ts: number;
  readonly room_id?: string | undefined;
  readonly state_key?: string | undefined;
  /** Target of a redaction event in room versions 1-10 (later versions use `content.redacts`). */
  readonly redacts?: string | undefined;
  readonly content: Readonly<Record<string, unknown>>;
  readonly unsigned?: Readonly<Record<string, unknown>> | undefined;
}

/** One joined room's part of a sync response. */
export interface SyncRoom {
  readonly roomId: string;
  readonly events: readonly RawEvent[];
  readonly limited: boolean;
  readonly prevBatch: string | null;
  /** True when the room's state or timeline in this response shows end-to-end encryption (Lisa reads no encrypted events). */
  readonly encrypted?: boolean;
  /**
   * The room's `state.events`, present when not empty: its full state after a
   * join (lazy members aside), what changed before the timeline after a gap.
   * Room conditions are kept from these and the timeline's state events.
   */
  readonly state?: readonly RawEvent[];
}

/** A validated `/sync` response reduced to what Lisa uses. */
export interface SyncBatch {
  readonly nextBatch: string;
  readonly rooms: readonly SyncRoom[];
  /** Rooms with a pending invitation for Lisa (`rooms.invite`). */
  readonly invitedRoomIds?: readonly string[];
  /** Rooms Lisa left or was removed from (`rooms.leave`). */
  readonly leftRoomIds?: readonly string[];
  /** This device's end-to-end encryption part of the response; absent when the response has none. */
  readonly device?: DeviceChanges;
}

/** The device part of a `/sync` response, as the crypto machine takes it (encrypted rooms only). */
export interface DeviceChanges {
  /** `to_device.events`, each an object with `type`, `sender` and `content` (Olm ciphertext, never logged). */
  readonly toDevice: readonly Readonly<Record<string, unknown>>[];
  /** `device_lists.changed` and `.left`: users whose devices changed, or who share no encrypted room any more. */
  readonly changed: readonly string[];
  readonly left: readonly string[];
  /** `device_one_time_keys_count`: unclaimed one-time keys on the server, per algorithm. */
  readonly oneTimeKeyCounts: Readonly<Record<string, number>>;
  /** `device_unused_fallback_key_types`; absent when the server does not send it. */
  readonly unusedFallbackKeyTypes?: readonly string[];
}

/** One request of the crypto machine, sent by the Matrix client with its token, deadline and retries. */
export type CryptoRequest =
  | { readonly kind: "keys_upload" | "keys_query" | "keys_claim" | "signatures_upload"; readonly body: unknown }
  | { readonly kind: "to_device"; readonly eventType: string; readonly txnId: string; readonly body: unknown }
  /** `POST /keys/device_signing/upload`: her cross-signing public keys, with password user-interactive auth when the server asks. */
  | { readonly kind: "signing_keys_upload"; readonly body: Readonly<Record<string, unknown>> }
  /** `GET /user/{her id}/account_data/{type}`: her secret storage (cross-signing keys an Element login put there). */
  | { readonly kind: "account_data"; readonly eventType: string };

/** The Matrix endpoints of end-to-end encryption: the response body as JSON, for the crypto machine to read. */
export interface CryptoRequestPort {
  cryptoRequest(request: CryptoRequest, signal: AbortSignal): Promise<Result<unknown, MatrixError>>;
}

/** Parameters of one controlled `/sync` call. */
export interface SyncRequest {
  readonly since: string | null;
  readonly timeoutMs: number;
  readonly roomIds: readonly string[];
  readonly timelineLimit: number;
  readonly signal: AbortSignal;
}

/** A page of `/messages` or `/relations` results. */
export interface EventPage {
  readonly events: readonly RawEvent[];
  /** Token for the next (older, when paging backwards) page; null at the end. */
  readonly next: string | null;
}

/** `/context` result: events before the anchor (newest first), the anchor, member state. */
export interface EventContext {
  readonly event: RawEvent;
  readonly eventsBefore: readonly RawEvent[];
  readonly state: readonly RawEvent[];
  /** Token to page further back with `/messages` (`start`). */
  readonly start: string | null;
}

/** Identity reported by `/account/whoami`. */
export interface WhoAmI {
  readonly userId: string;
  readonly deviceId: string | null;
}

/** Sync operations used by ingestion. */
export interface SyncPort {
  sync(request: SyncRequest): Promise<Result<SyncBatch, MatrixError>>;
  /** Backwards `/messages` page from `from` (exclusive). */
  messagesBackwards(roomId: string, from: string, limit: number, signal: AbortSignal): Promise<Result<EventPage, MatrixError>>;
}

/** Read-only room history used by classification and context. */
export interface HistoryPort {
  event(roomId: string, eventId: string, signal: AbortSignal): Promise<Result<RawEvent, MatrixError>>;
  context(roomId: string, eventId: string, limit: number, signal: AbortSignal): Promise<Result<EventContext, MatrixError>>;
  messagesBackwards(roomId: string, from: string, limit: number, signal: AbortSignal): Promise<Result<EventPage, MatrixError>>;
  /** Backwards page of a thread's events (`/relations/{root}/m.thread`). */
  threadBackwards(roomId: string, rootId: string, from: string | null, limit: number, signal: AbortSignal): Promise<Result<EventPage, MatrixError>>;
}

/** Forward reads after an event, to find a reply already sent under an earlier access token. */
export interface ForwardHistoryPort {
  /** Events after `eventId` (oldest first, from `/context`), with the token to read on forwards. */
  eventsAfter(roomId: string, eventId: string, limit: number, signal: AbortSignal): Promise<Result<EventPage, MatrixError>>;
  /** Forwards `/messages` page from `from` (exclusive), optionally only events of `sender`. */
  messagesForward(roomId: string, from: string, limit: number, sender: string | null, signal: AbortSignal): Promise<Result<EventPage, MatrixError>>;
}

/** Room writes used by the invocation worker. */
export interface RoomWritePort {
  /** `PUT /rooms/{room}/send/m.room.message/{txnId}`; returns the event id. */
  sendMessage(roomId: string, txnId: string, content: Readonly<Record<string, unknown>>, signal: AbortSignal): Promise<Result<string, MatrixError>>;
  /**
   * A number that changes whenever the access token changes (login or refresh).
   * Servers may scope transaction ids to the token (Dendrite), so a resend under
   * another token than an earlier attempt is not idempotent by itself.
   */
  tokenGeneration(): number;
  /** `PUT /rooms/{room}/typing/{user}`. */
  setTyping(roomId: string, typing: boolean, timeoutMs: number, signal: AbortSignal): Promise<Result<void, MatrixError>>;
}

/** Read-only room inspection for `lisa check` and the startup room diagnosis: nothing is sent into any room. */
export interface RoomInspectPort {
  /** `GET /joined_rooms`. */
  joinedRooms(signal: AbortSignal): Promise<Result<readonly string[], MatrixError>>;
  /** `GET /rooms/{room}/state/{type}/{key}?format=event`: the state event (or its content), null when the room has none (404). */
  stateEvent(roomId: string, type: string, stateKey: string, signal: AbortSignal): Promise<Result<StateEvent | null, MatrixError>>;
  /** `GET /directory/room/{alias}`: the room id, or null when the alias does not exist (404). */
  resolveAlias(alias: string, signal: AbortSignal): Promise<Result<string | null, MatrixError>>;
  /** Rooms among `roomIds` that invited Lisa and she has not joined (one initial `/sync` without timeline). */
  invitedRooms(roomIds: readonly string[], signal: AbortSignal): Promise<Result<readonly string[], MatrixError>>;
}

/** One room state event as `RoomInspectPort.stateEvent` reads it; `sender` is null when the server returned content only. */
export interface StateEvent {
  readonly sender: string | null;
  readonly content: Readonly<Record<string, unknown>>;
}
