// Public types of the fake homeserver (test support). The wire shapes follow the
// Matrix client-server API; the options and observation records are ours.

/** Which real server's documented quirks the fake reproduces. */
export type HomeserverProfile = "synapse" | "continuwuity" | "dendrite";

/** Options of `startFakeHomeserver`. */
export interface FakeHomeserverOptions {
  readonly profile: HomeserverProfile;
  /** Server name used in generated ids and login responses; default "localhost". */
  readonly serverName?: string;
  /** Synapse: lifetime of a refreshable access token in ms (default 300000, Synapse's default). */
  readonly accessTokenLifetimeMs?: number;
  /** Synapse: lifetime of a refresh token in ms; null (default) = never expires. */
  readonly refreshTokenLifetimeMs?: number | null;
  /** Base wall clock (default `Date.now`); the fake adds its adjustable offset. */
  readonly now?: () => number;
  /** Largest accepted event, in bytes of JSON (Synapse: 65536). */
  readonly maxEventBytes?: number;
  /** Synapse's `rc_message`: sends of each user beyond this rate are refused with 429 M_LIMIT_EXCEEDED and retry_after_ms. */
  readonly messageRateLimit?: MessageRateLimit;
}

/** A leaky-bucket send limit per user (Synapse's `rc_message`: `per_second`, `burst_count`). */
export interface MessageRateLimit {
  readonly perSecond: number;
  readonly burstCount: number;
}

/** Names of the endpoints the fake serves (used by fault matchers and the request log). */
export type EndpointName =
  | "versions"
  | "login"
  | "refresh"
  | "logout"
  | "whoami"
  | "sync"
  | "filter"
  | "joined_rooms"
  | "messages"
  | "context"
  | "event"
  | "relations"
  | "send"
  | "typing"
  | "state"
  | "directory"
  | "joined_members"
  | "members"
  | "keys_upload"
  | "keys_query"
  | "keys_claim"
  | "keys_device_signing"
  | "keys_signatures"
  | "send_to_device";

/** What a fault matcher and the request log see of a request. */
export interface RequestInfo {
  readonly method: string;
  /** Raw (still percent-encoded) path, without the query string. */
  readonly path: string;
  readonly endpoint: EndpointName | "unknown";
  /** Query parameters except `access_token`. */
  readonly query: Readonly<Record<string, string>>;
  /** Whether an access token was presented (header or query). */
  readonly hasAuth: boolean;
  /** The user the presented token currently belongs to, if it is valid. */
  readonly userId: string | null;
}

/** A scripted failure injected by `failNext`. */
export type Fault =
  | { readonly kind: "status"; readonly status: number; readonly errcode: string; readonly error?: string; readonly retryAfterMs?: number }
  | { readonly kind: "drop" }
  | { readonly kind: "dropAfterCommit" }
  | { readonly kind: "unknownPos" }
  | { readonly kind: "repeatLastSync" }
  | { readonly kind: "expireToken" };

/** Selects the requests a fault applies to: an endpoint name or a predicate. */
export type FaultMatcher = EndpointName | ((request: RequestInfo) => boolean);

/** Options of `failNext`. */
export interface FaultOptions {
  /** How many matching requests the fault applies to (default 1). */
  readonly times?: number;
}

/** One served (or dropped) request. Never holds bodies, passwords or tokens. */
export interface RequestRecord extends RequestInfo {
  /** HTTP status written, or "dropped" when the socket was destroyed instead. */
  readonly status: number | "dropped";
  /** Kind of the injected fault that shaped this request, if any. */
  readonly fault: Fault["kind"] | null;
  /** Server clock when the request finished. */
  readonly at: number;
}

/** A room event in the client-server "ClientEvent" format. */
export interface ClientEvent {
  readonly event_id: string;
  readonly type: string;
  readonly sender: string;
  readonly origin_server_ts: number;
  readonly room_id?: string;
  readonly state_key?: string;
  readonly redacts?: string;
  readonly content: Readonly<Record<string, unknown>>;
  readonly unsigned?: Readonly<Record<string, unknown>>;
}

/** One `PUT /typing` call as the server applied it. */
export interface TypingRecord {
  readonly roomId: string;
  readonly userId: string;
  readonly typing: boolean;
  /** `timeout` as the client sent it (null when absent). */
  readonly requestedTimeoutMs: number | null;
  /** Timeout after the server's clamp; null for `typing: false`. */
  readonly effectiveTimeoutMs: number | null;
  readonly at: number;
}

/** A room member for `createRoom`: a user id or a user id with a display name. */
export type MemberSpec = string | { readonly userId: string; readonly displayName?: string };

/** Per-event options of the room-writing helpers. */
export interface SendOptions {
  /** Use exactly this `origin_server_ts` (bypasses the monotonic clock). */
  readonly originServerTs?: number;
}

/** A device of an account. */
export interface DeviceInfo {
  readonly deviceId: string;
  readonly displayName: string | null;
}
