import type { Secret } from "../config/secret.ts";
import { err, ok, type Result } from "../errors.ts";
import { roomHash } from "../log/hash.ts";
import type { Logger } from "../log/logger.ts";
import { AuthSession, type AuthStats, type AuthorizedRequest, type ReauthKind } from "./auth.ts";
import { MATRIX_CODES } from "./codes.ts";
import type { MatrixError } from "./errors.ts";
import type {
  CryptoRequest, CryptoRequestPort, EventContext, EventPage, ForwardHistoryPort, HistoryPort, RawEvent, RoomInspectPort, RoomWritePort, StateEvent, SyncBatch, SyncPort, SyncRequest, WhoAmI,
} from "./port.ts";
import { normalizeDirectory, normalizeJoinedRooms, normalizeRoomMembers, normalizeStateEvent, type RoomMembers, sectionRoomIds } from "./room-schemas.ts";
import { clampSetting, resolveRetryPolicy, type RetryOptions, type RetryPolicy, withRetry } from "./retry.ts";
import {
  type DropReporter, normalizeContext, normalizeContextAfter, normalizeEvent, normalizeMessages, normalizeRelations, normalizeSync,
  sendResponseSchema, typingResponseSchema,
} from "./schemas.ts";
import { MatrixTransport } from "./transport.ts";
import { withPasswordAuth } from "./uia.ts";
import { parseBody } from "./wire.ts";

/** What the Matrix client needs from configuration. */
export interface MatrixClientConfig {
  readonly homeserverUrl: string;
  readonly userId: string;
  readonly deviceId: string;
  readonly deviceDisplayName: string;
  readonly password: Secret;
}

/** Runtime options of the Matrix client; numeric ones are clamped to hard ceilings. */
export interface MatrixClientOptions {
  /** Receives the client's log lines as is (callers bind `component` themselves). */
  readonly log: Logger;
  /** Deadline of one ordinary request attempt (default 30 s, 1 ms - 300 s). */
  readonly requestTimeoutMs?: number;
  /** Added to the long-poll timeout for a `/sync` attempt's deadline (default 10 s, ceiling 60 s). */
  readonly syncTimeoutMarginMs?: number;
  /** Largest accepted response body (default 32 MiB, ceiling 256 MiB). */
  readonly maxResponseBytes?: number;
  readonly retry?: RetryOptions;
  /** Called after every token refresh or password re-login (not after the first login). */
  readonly onReauthenticated?: (kind: ReauthKind) => void;
  /** Log out a login whose identity could not be verified (for `lisa check`'s own device only). */
  readonly logoutUnverifiedLogins?: boolean;
  /** Clock (epoch ms), for token expiry and `Retry-After` dates. */
  readonly now?: () => number;
}

/** Lisa's Matrix client: the sync, history and room-write ports plus the auth lifecycle. */
export interface MatrixClient extends SyncPort, HistoryPort, ForwardHistoryPort, RoomWritePort, RoomInspectPort, CryptoRequestPort {
  /** Password login with the stable device id, then `/whoami` identity verification. */
  login(signal: AbortSignal): Promise<Result<WhoAmI, MatrixError>>;
  /** `/account/whoami` with the current session. */
  whoami(signal: AbortSignal): Promise<Result<WhoAmI, MatrixError>>;
  /** Counts of password logins and token refreshes so far. */
  authStats(): AuthStats;
  /** `PUT /rooms/{room}/send/{type}/{txnId}` with the same token discipline as `sendMessage` (encrypted rooms: `m.room.encrypted`). */
  sendRoomEvent(roomId: string, eventType: string, txnId: string, content: Readonly<Record<string, unknown>>, signal: AbortSignal): Promise<Result<string, MatrixError>>;
  /** `GET /rooms/{room}/members?not_membership=leave`: joined and invited members' user ids (encrypted rooms: whom the room key is shared with). */
  roomMembers(roomId: string, signal: AbortSignal): Promise<Result<RoomMembers, MatrixError>>;
  /** `POST /logout`: deletes this client's device and tokens (for `lisa check`'s own device; the service never logs out). */
  logout(signal: AbortSignal): Promise<Result<null, MatrixError>>;
  /** Aborts in-flight requests and closes the client's sockets. Never logs out. */
  close(): Promise<void>;
}

const V3 = "/_matrix/client/v3";
const V1 = "/_matrix/client/v1";
/** Servers cap `/context` at 100 events, split between before and after. */
export const CONTEXT_LIMIT_CAP = 100;
/** Typing timeouts are clamped to this range (Continuwuity's own clamp). */
export const TYPING_TIMEOUT_RANGE = { min: 15_000, max: 45_000 } as const;
const REQUEST_TIMEOUT = { default: 30_000, min: 1, max: 300_000 } as const;
const SYNC_MARGIN = { default: 10_000, min: 0, max: 60_000 } as const;
const RESPONSE_BYTES = { default: 32 * 1024 * 1024, min: 1024, max: 256 * 1024 * 1024 } as const;
const PAGE_LIMIT_MAX = 1_000;
const CRYPTO_PATHS = { keys_upload: "upload", keys_query: "query", keys_claim: "claim", signatures_upload: "signatures/upload" } as const;

/** Percent-encodes every path segment. */
function segments(...parts: string[]): string {
  return parts.map((part) => `/${encodeURIComponent(part)}`).join("");
}

/** The inline `/sync` filter: allowed rooms, timeline limit, lazy members, no presence or account data. */
export function syncFilter(roomIds: readonly string[], timelineLimit: number): string {
  const none = { types: [] as string[] };
  return JSON.stringify({
    presence: none,
    account_data: none,
    room: {
      rooms: [...roomIds],
      timeline: { limit: timelineLimit, lazy_load_members: true },
      state: { lazy_load_members: true },
      ephemeral: none,
      account_data: none,
    },
  });
}

class HttpMatrixClient implements MatrixClient {
  readonly #config: MatrixClientConfig;
  readonly #log: Logger;
  readonly #lifetime = new AbortController();
  readonly #transport: MatrixTransport;
  readonly #auth: AuthSession;
  readonly #retry: RetryPolicy;
  readonly #requestTimeoutMs: number;
  readonly #syncMarginMs: number;

  constructor(config: MatrixClientConfig, options: MatrixClientOptions) {
    this.#config = config;
    this.#log = options.log;
    this.#retry = resolveRetryPolicy(options.retry);
    this.#requestTimeoutMs = clampSetting(options.requestTimeoutMs, REQUEST_TIMEOUT.default, REQUEST_TIMEOUT.min, REQUEST_TIMEOUT.max);
    this.#syncMarginMs = clampSetting(options.syncTimeoutMarginMs, SYNC_MARGIN.default, SYNC_MARGIN.min, SYNC_MARGIN.max);
    const now = options.now ?? Date.now;
    this.#transport = new MatrixTransport({
      homeserverUrl: config.homeserverUrl,
      maxResponseBytes: clampSetting(options.maxResponseBytes, RESPONSE_BYTES.default, RESPONSE_BYTES.min, RESPONSE_BYTES.max),
      maxRetryAfterMs: this.#retry.maxRetryAfterMs,
      now,
      lifetime: this.#lifetime.signal,
    });
    this.#auth = new AuthSession(config, {
      transport: this.#transport, retry: this.#retry, log: this.#log, requestTimeoutMs: this.#requestTimeoutMs, now,
      lifetime: this.#lifetime.signal,
      ...(options.onReauthenticated === undefined ? {} : { onReauthenticated: options.onReauthenticated }),
      ...(options.logoutUnverifiedLogins === undefined ? {} : { logoutUnverifiedLogins: options.logoutUnverifiedLogins }),
    });
  }

  login(signal: AbortSignal): Promise<Result<WhoAmI, MatrixError>> {
    return this.#auth.login(signal);
  }

  whoami(signal: AbortSignal): Promise<Result<WhoAmI, MatrixError>> {
    return withRetry(this.#retry, signal, () => this.#auth.whoami(signal), this.#onRetry("whoami"));
  }

  authStats(): AuthStats {
    return this.#auth.stats();
  }

  async sync(request: SyncRequest): Promise<Result<SyncBatch, MatrixError>> {
    const timeoutMs = Math.max(0, Math.floor(request.timeoutMs));
    const query: Record<string, string> = {
      timeout: String(timeoutMs),
      filter: syncFilter(request.roomIds, request.timelineLimit),
      full_state: "false",
    };
    if (request.since !== null) query["since"] = request.since;
    const body = await this.#call("sync", {
      method: "GET", path: `${V3}/sync`, query, signal: request.signal,
      timeoutMs: Math.max(this.#requestTimeoutMs, timeoutMs + this.#syncMarginMs),
    });
    return body.ok ? normalizeSync(body.value, this.#onDrop) : body;
  }

  async messagesBackwards(roomId: string, from: string, limit: number, signal: AbortSignal): Promise<Result<EventPage, MatrixError>> {
    const body = await this.#call("messages", this.#get(`${V3}/rooms${segments(roomId, "messages")}`, signal, {
      dir: "b", from, limit: String(pageLimit(limit)),
    }));
    return body.ok ? normalizeMessages(body.value, roomId, from, this.#onDrop) : body;
  }

  async event(roomId: string, eventId: string, signal: AbortSignal): Promise<Result<RawEvent, MatrixError>> {
    const body = await this.#call("event", this.#get(`${V3}/rooms${segments(roomId, "event", eventId)}`, signal));
    return body.ok ? normalizeEvent(body.value, roomId, eventId) : body;
  }

  // Servers split `limit` between before and after: ask for twice the wanted count, within their cap.
  #contextBody(roomId: string, eventId: string, limit: number, signal: AbortSignal): Promise<Result<unknown, MatrixError>> {
    const asked = Math.min(Math.max(0, Math.floor(limit)) * 2, CONTEXT_LIMIT_CAP);
    return this.#call("context", this.#get(`${V3}/rooms${segments(roomId, "context", eventId)}`, signal, { limit: String(asked) }));
  }

  async context(roomId: string, eventId: string, limit: number, signal: AbortSignal): Promise<Result<EventContext, MatrixError>> {
    const body = await this.#contextBody(roomId, eventId, limit, signal);
    return body.ok ? normalizeContext(body.value, roomId, eventId, this.#onDrop) : body;
  }

  async eventsAfter(roomId: string, eventId: string, limit: number, signal: AbortSignal): Promise<Result<EventPage, MatrixError>> {
    const body = await this.#contextBody(roomId, eventId, limit, signal);
    return body.ok ? normalizeContextAfter(body.value, roomId, this.#onDrop) : body;
  }

  async messagesForward(
    roomId: string, from: string, limit: number, sender: string | null, signal: AbortSignal,
  ): Promise<Result<EventPage, MatrixError>> {
    const query: Record<string, string> = { dir: "f", from, limit: String(pageLimit(limit)) };
    if (sender !== null) query["filter"] = JSON.stringify({ senders: [sender] });
    const body = await this.#call("messages", this.#get(`${V3}/rooms${segments(roomId, "messages")}`, signal, query));
    return body.ok ? normalizeMessages(body.value, roomId, from, this.#onDrop) : body;
  }

  tokenGeneration(): number {
    const stats = this.#auth.stats();
    return stats.passwordLogins + stats.refreshes;
  }

  async threadBackwards(
    roomId: string, rootId: string, from: string | null, limit: number, signal: AbortSignal,
  ): Promise<Result<EventPage, MatrixError>> {
    const query: Record<string, string> = { dir: "b", limit: String(pageLimit(limit)) };
    if (from !== null) query["from"] = from;
    const path = `${V1}/rooms${segments(roomId, "relations", rootId, "m.thread")}`;
    const body = await this.#call("relations", this.#get(path, signal, query));
    return body.ok ? normalizeRelations(body.value, roomId, from, this.#onDrop) : body;
  }

  sendMessage(
    roomId: string, txnId: string, content: Readonly<Record<string, unknown>>, signal: AbortSignal,
  ): Promise<Result<string, MatrixError>> {
    return this.sendRoomEvent(roomId, "m.room.message", txnId, content, signal);
  }

  async sendRoomEvent(
    roomId: string, eventType: string, txnId: string, content: Readonly<Record<string, unknown>>, signal: AbortSignal,
  ): Promise<Result<string, MatrixError>> {
    // Retrying with the same txnId is idempotent only under the same access
    // token on every server (Dendrite scopes txn ids to the token): a refused
    // token is renewed but the send not repeated, and internal retries stop
    // once the token changed; the worker decides what comes next.
    const request: AuthorizedRequest = {
      method: "PUT", path: `${V3}/rooms${segments(roomId, "send", eventType, txnId)}`, body: content,
      signal, timeoutMs: this.#requestTimeoutMs,
    };
    let firstToken: number | null = null;
    let renewed = false;
    const body = await withRetry(this.#retry, signal, async () => {
      // Taken when the first request goes out (after any first login): a token
      // renewed by another request while it is in flight must stop the retries too.
      const result = await this.#auth.send(request, false, () => { firstToken ??= this.tokenGeneration(); });
      renewed ||= !result.ok && result.error.code === MATRIX_CODES.sessionRenewed;
      firstToken ??= this.tokenGeneration();
      return result;
    }, this.#onRetry("send"), () => !renewed && this.tokenGeneration() === firstToken);
    const parsed = body.ok ? parseBody(sendResponseSchema, body.value) : body;
    return parsed.ok ? ok(parsed.value.event_id) : parsed;
  }

  async setTyping(roomId: string, typing: boolean, timeoutMs: number, signal: AbortSignal): Promise<Result<void, MatrixError>> {
    const { min, max } = TYPING_TIMEOUT_RANGE;
    const payload = typing ? { typing: true, timeout: clampSetting(Math.floor(timeoutMs), min, min, max) } : { typing: false };
    const body = await this.#call("typing", {
      method: "PUT", path: `${V3}/rooms${segments(roomId, "typing", this.#config.userId)}`, body: payload,
      signal, timeoutMs: this.#requestTimeoutMs,
    });
    const parsed = body.ok ? parseBody(typingResponseSchema, body.value) : body;
    return parsed.ok ? ok(undefined) : err(parsed.error);
  }

  async joinedRooms(signal: AbortSignal): Promise<Result<readonly string[], MatrixError>> {
    const body = await this.#call("joined_rooms", this.#get(`${V3}/joined_rooms`, signal));
    return body.ok ? normalizeJoinedRooms(body.value) : body;
  }

  async roomMembers(roomId: string, signal: AbortSignal): Promise<Result<RoomMembers, MatrixError>> {
    const body = await this.#call("members", this.#get(`${V3}/rooms${segments(roomId, "members")}`, signal, { not_membership: "leave" }));
    return body.ok ? normalizeRoomMembers(body.value) : body;
  }

  async stateEvent(roomId: string, type: string, stateKey: string, signal: AbortSignal): Promise<Result<StateEvent | null, MatrixError>> {
    const path = `${V3}/rooms${segments(roomId, "state", type)}${stateKey === "" ? "" : segments(stateKey)}`;
    const body = await this.#call("state", this.#get(path, signal, { format: "event" }));
    if (!body.ok) return body.error.code === MATRIX_CODES.notFound ? ok(null) : body;
    return normalizeStateEvent(body.value);
  }

  async resolveAlias(alias: string, signal: AbortSignal): Promise<Result<string | null, MatrixError>> {
    const body = await this.#call("directory", this.#get(`${V3}/directory/room${segments(alias)}`, signal));
    if (!body.ok) return body.error.code === MATRIX_CODES.notFound ? ok(null) : body;
    return normalizeDirectory(body.value);
  }

  async invitedRooms(roomIds: readonly string[], signal: AbortSignal): Promise<Result<readonly string[], MatrixError>> {
    // An initial sync without timeline: only the section keys are read.
    const body = await this.#call("sync", this.#get(`${V3}/sync`, signal, { timeout: "0", filter: syncFilter(roomIds, 0) }));
    if (!body.ok) return body;
    const rooms = (body.value as { rooms?: { invite?: unknown } } | null)?.rooms;
    const invited = new Set(sectionRoomIds(rooms?.invite));
    return ok(roomIds.filter((roomId) => invited.has(roomId)));
  }

  cryptoRequest(request: CryptoRequest, signal: AbortSignal): Promise<Result<unknown, MatrixError>> {
    // Each is safe to repeat: uploads and queries are idempotent, a repeated
    // claim takes another one-time key, to-device sends carry their txn id.
    if (request.kind === "to_device") {
      const path = `${V3}/sendToDevice${segments(request.eventType, request.txnId)}`;
      return this.#call("send_to_device", { method: "PUT", path, body: request.body, signal, timeoutMs: this.#requestTimeoutMs });
    }
    if (request.kind === "account_data") {
      return this.#call("account_data", this.#get(`${V3}/user${segments(this.#config.userId, "account_data", request.eventType)}`, signal));
    }
    if (request.kind === "signing_keys_upload") {
      const post = (body: unknown) => this.#call("device_signing_upload", { method: "POST", path: `${V3}/keys/device_signing/upload`, body, signal, timeoutMs: this.#requestTimeoutMs });
      return withPasswordAuth(post, request.body, this.#config.userId, this.#config.password);
    }
    const path = `${V3}/keys/${CRYPTO_PATHS[request.kind]}`;
    return this.#call(request.kind, { method: "POST", path, body: request.body, signal, timeoutMs: this.#requestTimeoutMs });
  }

  logout(signal: AbortSignal): Promise<Result<null, MatrixError>> {
    return withRetry(this.#retry, signal, () => this.#auth.logout(signal), this.#onRetry("logout"));
  }

  async close(): Promise<void> {
    this.#lifetime.abort();
    await this.#transport.close();
  }

  #get(path: string, signal: AbortSignal, query?: Record<string, string>): AuthorizedRequest {
    return { method: "GET", path, signal, timeoutMs: this.#requestTimeoutMs, ...(query === undefined ? {} : { query }) };
  }

  /** An authenticated request with bounded retries (all Lisa's requests are idempotent). */
  #call(endpoint: string, request: AuthorizedRequest): Promise<Result<unknown, MatrixError>> {
    return withRetry(this.#retry, request.signal, () => this.#auth.send(request), this.#onRetry(endpoint));
  }

  #onRetry(endpoint: string) {
    return (error: MatrixError, attempt: number, delayMs: number): void => {
      this.#log.info("matrix_request_retry", { endpoint, code: error.code, http_status: error.httpStatus, attempt, delay_ms: delayMs });
    };
  }

  readonly #onDrop: DropReporter = (code, roomId) => {
    this.#log.debug("matrix_event_dropped", { code, room_id_hash: roomId === null ? null : roomHash(roomId) });
  };
}

function pageLimit(limit: number): number {
  return Math.min(PAGE_LIMIT_MAX, Math.max(1, Math.floor(limit)));
}

/** Builds Lisa's Matrix client with its own HTTP agent; nothing is sent until a method is called. */
export function createMatrixClient(config: MatrixClientConfig, options: MatrixClientOptions): MatrixClient {
  return new HttpMatrixClient(config, options);
}
