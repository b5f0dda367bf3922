// A protocol-faithful in-memory Matrix homeserver for tests:
// node:http on 127.0.0.1:0, three profiles (synapse, continuwuity, dendrite; see fake-homeserver/traits.ts), scripted
// faults, and observation helpers. Tests drive the human side directly and
// let the client under test speak HTTP.
//
//   const hs = await startFakeHomeserver({ profile: "continuwuity" });
//   t.after(() => hs.close());
//   hs.addUser("@lisa:localhost", "pw");
//   hs.createRoom("!room1:localhost", ["@alice:localhost", "@lisa:localhost"]);
//   hs.sendText("!room1:localhost", "@alice:localhost", "Lisa, hi", { "m.mentions": { user_ids: ["@lisa:localhost"] } });
//   hs.failNext("send", { kind: "dropAfterCommit" });
//   await hs.waitFor((s) => s.eventsBy("@lisa:localhost", "!room1:localhost").length === 1);
//
// Semantics worth knowing: every room shares one global stream; history
// visibility is "shared"; tokens are opaque per profile (see tokens.ts);
// `setClockOffset` moves the server clock for event timestamps and token expiry.

import { EventEmitter } from "node:events";
import { Accounts } from "./fake-homeserver/accounts.ts";
import { editContent, reactionContent, replyContent, textContent, threadContent } from "./fake-homeserver/content.ts";
import { FaultQueue } from "./fake-homeserver/faults.ts";
import { HistoryEndpoints } from "./fake-homeserver/history.ts";
import { HttpFrontend } from "./fake-homeserver/http-frontend.ts";
import { KeyServer } from "./fake-homeserver/keys.ts";
import { isObject } from "./fake-homeserver/reply.ts";
import { RoomDirectory } from "./fake-homeserver/room-state.ts";
import { RoomStore } from "./fake-homeserver/store.ts";
import type { StoredEvent } from "./fake-homeserver/store.ts";
import { SyncService } from "./fake-homeserver/sync.ts";
import { traitsOf } from "./fake-homeserver/traits.ts";
import type {
  ClientEvent,
  DeviceInfo,
  EndpointName,
  Fault,
  FaultMatcher,
  FaultOptions,
  FakeHomeserverOptions,
  HomeserverProfile,
  MemberSpec,
  RequestRecord,
  SendOptions,
  TypingRecord,
} from "./fake-homeserver/types.ts";
import { WriteEndpoints } from "./fake-homeserver/writes.ts";

export type {
  ClientEvent,
  DeviceInfo,
  EndpointName,
  Fault,
  FaultMatcher,
  FaultOptions,
  FakeHomeserverOptions,
  HomeserverProfile,
  MemberSpec,
  RequestInfo,
  RequestRecord,
  SendOptions,
  TypingRecord,
} from "./fake-homeserver/types.ts";
export { pageToken, parseToken, syncToken } from "./fake-homeserver/tokens.ts";
export type { TokenBounds } from "./fake-homeserver/tokens.ts";
export { MAX_SYNC_TIMEOUT_MS } from "./fake-homeserver/sync.ts";
export { CONTEXT_LIMIT_CAP } from "./fake-homeserver/history.ts";

/** Default deadline of `waitFor` when the caller passes no signal. */
export const DEFAULT_WAIT_MS = 10_000;
/** Synapse's default lifetime of a refreshable access token. */
export const DEFAULT_ACCESS_TOKEN_LIFETIME_MS = 300_000;
/** Synapse's default largest event (bytes of JSON). */
export const DEFAULT_MAX_EVENT_BYTES = 65_536;

/** A running fake homeserver. Create it with `startFakeHomeserver`. */
export class FakeHomeserver {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  readonly profile: HomeserverProfile;
  readonly serverName: string;
  private readonly store: RoomStore;
  private readonly accounts: Accounts;
  private readonly writes: WriteEndpoints;
  private readonly sync: SyncService;
  private readonly faults: FaultQueue;
  private readonly http: HttpFrontend;
  private readonly activity: EventEmitter;
  private readonly directory: RoomDirectory;
  /** The end-to-end encryption key endpoints (device, one-time, cross-signing keys, to-device queues) and what they saw; an in-process member's device uses them too. */
  readonly keys: KeyServer;

  /** Internal: use `startFakeHomeserver`. */
  constructor(url: string, parts: { profile: HomeserverProfile; serverName: string; store: RoomStore; accounts: Accounts; writes: WriteEndpoints; sync: SyncService; faults: FaultQueue; http: HttpFrontend; activity: EventEmitter; directory: RoomDirectory; keys: KeyServer }) {
    this.url = url;
    this.profile = parts.profile;
    this.serverName = parts.serverName;
    this.store = parts.store;
    this.accounts = parts.accounts;
    this.writes = parts.writes;
    this.sync = parts.sync;
    this.faults = parts.faults;
    this.http = parts.http;
    this.activity = parts.activity;
    this.directory = parts.directory;
    this.keys = parts.keys;
  }

  /** Ends pending long-polls, destroys every socket, stops listening. */
  close(): Promise<void> {
    return this.http.close();
  }

  // ---- accounts -------------------------------------------------------------

  /** Registers an account that can log in with `password`. */
  addUser(userId: string, password: string): void {
    this.accounts.addUser(userId, password);
  }

  /** Changes a password; `logoutDevices` (default false) also deletes all devices and tokens. */
  setPassword(userId: string, password: string, options: { logoutDevices?: boolean } = {}): void {
    this.accounts.setPassword(userId, password, options.logoutDevices ?? false);
  }

  /** The devices of an account. */
  devices(userId: string): DeviceInfo[] {
    return this.accounts.devices(userId);
  }

  /** Expires every access token of `userId` (or of all users): Synapse answers soft_logout. */
  expireAccessTokens(userId?: string): void {
    this.accounts.expireAll(userId);
  }

  /** Successful password logins so far. */
  get loginCount(): number {
    return this.accounts.loginCount;
  }

  /** All login attempts so far, failed ones included. */
  get loginAttempts(): number {
    return this.accounts.loginAttempts;
  }

  /** Successful token refreshes so far. */
  get refreshCount(): number {
    return this.accounts.refreshCount;
  }

  // ---- rooms and the human side ---------------------------------------------

  /** Creates a room; the first member creates it, every member joins. */
  createRoom(roomId: string, members: readonly MemberSpec[]): void {
    this.store.createRoom(roomId, members);
  }

  /** `userId` joins (display name defaults to the localpart); returns the member event id. */
  join(roomId: string, userId: string, displayName?: string): string {
    return this.store.join(roomId, userId, displayName).eventId;
  }

  /** A joined member invites `userId` (who has not joined); returns the member event id. */
  invite(roomId: string, inviter: string, userId: string): string {
    this.requireJoined(roomId, inviter);
    return this.store.append({ roomId, type: "m.room.member", sender: inviter, stateKey: userId, content: { membership: "invite" } }).eventId;
  }

  /** Points a room alias at `roomId` in the room directory, or deletes it (null). */
  setAlias(alias: string, roomId: string | null): void {
    this.directory.setAlias(alias, roomId);
  }

  /** `userId` leaves; returns the member event id. */
  leave(roomId: string, userId: string): string {
    return this.sendState(roomId, userId, "m.room.member", userId, { membership: "leave" });
  }

  /** A joined member changes their display name in the room. */
  setDisplayName(roomId: string, userId: string, displayName: string): string {
    return this.sendState(roomId, userId, "m.room.member", userId, { membership: "join", displayname: displayName });
  }

  /** A joined member sends an event (default type `m.room.message`); returns its event id. */
  send(roomId: string, sender: string, content: Readonly<Record<string, unknown>>, type = "m.room.message", options: SendOptions = {}): string {
    this.requireJoined(roomId, sender);
    return this.store.append({ roomId, type, sender, content, ...options }).eventId;
  }

  /** Sends an `m.text` message; `extra` is merged into the content (e.g. `m.mentions`). */
  sendText(roomId: string, sender: string, body: string, extra: Readonly<Record<string, unknown>> = {}, options: SendOptions = {}): string {
    return this.send(roomId, sender, textContent(body, extra), "m.room.message", options);
  }

  /** Sends an `m.notice` message. */
  sendNotice(roomId: string, sender: string, body: string): string {
    return this.send(roomId, sender, { msgtype: "m.notice", body });
  }

  /** A joined member sends a state event. */
  sendState(roomId: string, sender: string, type: string, stateKey: string, content: Readonly<Record<string, unknown>>): string {
    this.requireJoined(roomId, sender);
    return this.store.append({ roomId, type, sender, content, stateKey }).eventId;
  }

  /** Sends a rich reply to `targetEventId`. */
  reply(roomId: string, sender: string, targetEventId: string, body: string, extra: Readonly<Record<string, unknown>> = {}): string {
    return this.send(roomId, sender, replyContent(targetEventId, body, extra));
  }

  /** Sends an edit (`m.replace`) of `targetEventId`. */
  edit(roomId: string, sender: string, targetEventId: string, newBody: string): string {
    return this.send(roomId, sender, editContent(targetEventId, newBody));
  }

  /** Sends a reaction (`m.reaction`, `m.annotation`). */
  react(roomId: string, sender: string, targetEventId: string, key: string): string {
    return this.send(roomId, sender, reactionContent(targetEventId, key), "m.reaction");
  }

  /** Redacts `targetEventId`: its content is emptied and `unsigned.redacted_because` set. */
  redact(roomId: string, sender: string, targetEventId: string, reason?: string): string {
    this.requireJoined(roomId, sender);
    const content = { redacts: targetEventId, ...(reason === undefined ? {} : { reason }) };
    return this.store.append({ roomId, type: "m.room.redaction", sender, content, redacts: targetEventId }).eventId;
  }

  /** Sends a message into the thread of `rootEventId` (falling back to a reply to the thread's latest event). */
  threadReply(roomId: string, sender: string, rootEventId: string, body: string, extra: Readonly<Record<string, unknown>> = {}): string {
    const inThread = this.store.events(roomId).filter((e) => {
      const relation = e.content["m.relates_to"];
      return isObject(relation) && relation["rel_type"] === "m.thread" && relation["event_id"] === rootEventId;
    });
    const latest = inThread.at(-1)?.eventId ?? rootEventId;
    return this.send(roomId, sender, threadContent(rootEventId, latest, body, extra));
  }

  private requireJoined(roomId: string, userId: string): void {
    if (this.store.membershipAt(roomId, userId) !== "join") throw new Error(`fake homeserver: ${userId} is not joined to ${roomId}`);
  }

  /** Shifts the server clock by `ms` (negative = past) for later events and token expiry. */
  setClockOffset(ms: number): void {
    this.store.setClockOffset(ms);
  }

  /** The server clock (base clock plus offset). */
  now(): number {
    return this.store.now();
  }

  /** Position of the newest event in the global stream. */
  get streamPosition(): number {
    return this.store.streamPosition;
  }

  // ---- faults ---------------------------------------------------------------

  /** Applies `fault` to the next `times` (default 1) requests that `matcher` selects. */
  failNext(matcher: FaultMatcher, fault: Fault, options: FaultOptions = {}): void {
    this.faults.add(matcher, fault, options.times ?? 1);
  }

  /** Sends refused by the configured message rate limit (`messageRateLimit`). */
  get rateLimitedSends(): number {
    return this.writes.rateLimited;
  }

  /** Remaining uses of queued faults. */
  get pendingFaults(): number {
    return this.faults.pending;
  }

  /** Drops every queued fault. */
  clearFaults(): void {
    this.faults.clear();
  }

  // ---- observation ----------------------------------------------------------

  /** The request log (optionally one endpoint's requests), oldest first. */
  requests(endpoint?: EndpointName): RequestRecord[] {
    return endpoint === undefined ? [...this.http.log] : this.http.log.filter((r) => r.endpoint === endpoint);
  }

  /** Unexpected exceptions inside the fake (answered with 500); tests may assert it stays empty. */
  get internalErrors(): readonly unknown[] {
    return this.http.internalErrors;
  }

  /** `/sync` requests in progress right now (a client that is long-polling shows 1). */
  get activeSyncs(): number {
    return this.http.activeSyncs;
  }

  private client(event: StoredEvent): ClientEvent {
    return this.store.toClient(event, null, true);
  }

  /** Every event of a room in stream order (ClientEvent format with `room_id`). */
  timeline(roomId: string): ClientEvent[] {
    return this.store.events(roomId).map((e) => this.client(e));
  }

  /** Events `userId` sent in `roomId`, in order. */
  eventsBy(userId: string, roomId: string): ClientEvent[] {
    return this.store.events(roomId).filter((e) => e.sender === userId).map((e) => this.client(e));
  }

  /** One event by id, if it exists. */
  event(eventId: string): ClientEvent | undefined {
    const stored = this.store.get(eventId);
    return stored === undefined ? undefined : this.client(stored);
  }

  /** Events created through `PUT /send` with `txnId` (exactly one after any number of retries). */
  sentByTxn(txnId: string): ClientEvent[] {
    return this.writes.sentByTxn(txnId).map((e) => this.client(e));
  }

  /** Joined rooms that arrived in any `/sync` response served to `userId` (whatever the filter asked for). */
  roomsSyncedTo(userId: string): ReadonlySet<string> {
    return this.sync.roomsServedTo(userId);
  }

  /** Typing changes applied in `roomId`, in order. */
  typingHistory(roomId: string): TypingRecord[] {
    return this.writes.typing.filter((r) => r.roomId === roomId);
  }

  /** Whether `userId` currently shows as typing in `roomId` (server clock). */
  isTyping(roomId: string, userId: string): boolean {
    return this.writes.isTyping(roomId, userId);
  }

  /**
   * Resolves once `predicate(this)` holds, re-checking after every event,
   * request and typing change; rejects when `signal` aborts (default: a
   * DEFAULT_WAIT_MS deadline).
   */
  waitFor(predicate: (server: FakeHomeserver) => boolean, signal: AbortSignal = AbortSignal.timeout(DEFAULT_WAIT_MS)): Promise<void> {
    return new Promise((resolve, reject) => {
      const cleanup = (): void => {
        this.activity.off("change", check);
        signal.removeEventListener("abort", onAbort);
      };
      const check = (): void => {
        let satisfied: boolean;
        try {
          satisfied = predicate(this);
        } catch (error) {
          cleanup();
          reject(error);
          return;
        }
        if (!satisfied) return;
        cleanup();
        resolve();
      };
      const onAbort = (): void => {
        cleanup();
        reject(new Error("fake homeserver: waitFor condition not met before the deadline", { cause: signal.reason }));
      };
      if (signal.aborted) return onAbort();
      this.activity.on("change", check);
      signal.addEventListener("abort", onAbort, { once: true });
      check();
    });
  }
}

/** Starts a fake homeserver on 127.0.0.1 with an ephemeral port. Close it in `after`. */
export async function startFakeHomeserver(options: FakeHomeserverOptions): Promise<FakeHomeserver> {
  const profile = options.profile;
  const serverName = options.serverName ?? "localhost";
  const activity = new EventEmitter();
  activity.setMaxListeners(0);
  const notify = (): void => void activity.emit("change");
  const traits = traitsOf(profile);
  const store = new RoomStore(serverName, options.now ?? Date.now, { unsigned: traits.unsignedOnEvents, roomVersion: traits.defaultRoomVersion });
  store.changes.on("room", notify);
  const accounts = new Accounts({
    profile,
    serverName,
    now: () => store.now(),
    accessTokenLifetimeMs: options.accessTokenLifetimeMs ?? DEFAULT_ACCESS_TOKEN_LIFETIME_MS,
    refreshTokenLifetimeMs: options.refreshTokenLifetimeMs ?? null,
  });
  const writes = new WriteEndpoints(store, profile, options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES, notify, options.messageRateLimit ?? null);
  const faults = new FaultQueue();
  const directory = new RoomDirectory(store);
  const keys = new KeyServer(profile, accounts, () => void store.changes.emit("room"));
  const sync = new SyncService(store, profile, keys);
  const components = { store, accounts, sync, history: new HistoryEndpoints(store, profile), writes, faults, directory, keys };
  const http = new HttpFrontend(components, notify);
  const url = await http.listen();
  return new FakeHomeserver(url, { profile, serverName, store, accounts, writes, sync, faults, http, activity, directory, keys });
}
