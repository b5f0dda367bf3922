import { randomBytes } from "node:crypto";
import {
  editContent,
  htmlContent,
  type Mentions,
  mentionContent,
  reactionContent,
  replyContent,
  type ReplyOptions,
  textContent,
  threadContent,
  type ThreadOptions,
} from "./content.ts";
import { type JsonObject, type RequestOptions, requestJson, requireString, seg, SynapseHttpError } from "./http.ts";
import {
  eventsBy,
  parseTimelineEvent,
  readTimeline,
  type ReadTimelineOptions,
  type TimelineEvent,
  waitForEvents,
  type WaitForEventsOptions,
} from "./timeline.ts";

/** What a logged-in client starts from. */
export interface MatrixTestClientInit {
  baseUrl: string;
  userId: string;
  deviceId: string;
  accessToken: string;
  refreshToken?: string | undefined;
  expiresInMs?: number | undefined;
}

/** Options of `createRoom`. */
export interface CreateRoomOptions {
  name?: string;
  invite?: string[];
  preset?: "private_chat" | "trusted_private_chat" | "public_chat";
  isDirect?: boolean;
}

let txnCounter = 0;

function newTxnId(): string {
  txnCounter += 1;
  return `lisa-test-${process.pid}-${txnCounter}-${randomBytes(4).toString("hex")}`;
}

/** A logged-in Matrix user (a human member or an admin) speaking the client-server API to the test homeserver. */
export class MatrixTestClient {
  /** Homeserver base URL. */
  readonly baseUrl: string;
  /** Full user id. */
  readonly userId: string;
  /** Device id of this login. */
  readonly deviceId: string;
  /** Current access token. */
  accessToken: string;
  /** Refresh token, when the login asked for one. */
  refreshToken: string | undefined;
  /** Access token lifetime reported by the login, when it expires. */
  expiresInMs: number | undefined;

  constructor(init: MatrixTestClientInit) {
    this.baseUrl = init.baseUrl;
    this.userId = init.userId;
    this.deviceId = init.deviceId;
    this.accessToken = init.accessToken;
    this.refreshToken = init.refreshToken;
    this.expiresInMs = init.expiresInMs;
  }

  /** An authenticated JSON request with this client's access token. */
  request(method: string, path: string, options: Omit<RequestOptions, "accessToken"> = {}): Promise<JsonObject> {
    return requestJson(this.baseUrl, method, path, { ...options, accessToken: this.accessToken });
  }

  /** The user id the homeserver associates with the current token. */
  async whoami(): Promise<string> {
    return requireString(await this.request("GET", "/_matrix/client/v3/account/whoami"), "user_id");
  }

  /** Sets this user's display name. */
  async setDisplayName(displayName: string): Promise<void> {
    await this.request("PUT", `/_matrix/client/v3/profile/${seg(this.userId)}/displayname`, { body: { displayname: displayName } });
  }

  /** Creates a room (private chat by default) and returns its id. */
  async createRoom(options: CreateRoomOptions = {}): Promise<string> {
    const body: JsonObject = { preset: options.preset ?? "private_chat", invite: options.invite ?? [] };
    if (options.name !== undefined) body["name"] = options.name;
    if (options.isDirect !== undefined) body["is_direct"] = options.isDirect;
    return requireString(await this.request("POST", "/_matrix/client/v3/createRoom", { body }), "room_id");
  }

  /** Invites a user to a room. */
  async invite(roomId: string, userId: string): Promise<void> {
    await this.request("POST", `/_matrix/client/v3/rooms/${seg(roomId)}/invite`, { body: { user_id: userId } });
  }

  /** Joins a room by id or alias and returns the room id. */
  async join(roomIdOrAlias: string): Promise<string> {
    return requireString(await this.request("POST", `/_matrix/client/v3/join/${seg(roomIdOrAlias)}`, { body: {} }), "room_id");
  }

  /** Leaves a room. */
  async leave(roomId: string): Promise<void> {
    await this.request("POST", `/_matrix/client/v3/rooms/${seg(roomId)}/leave`, { body: {} });
  }

  /** Sends any room event with a fresh transaction id; returns its event id. */
  async sendEvent(roomId: string, type: string, content: JsonObject): Promise<string> {
    const path = `/_matrix/client/v3/rooms/${seg(roomId)}/send/${seg(type)}/${seg(newTxnId())}`;
    return requireString(await this.request("PUT", path, { body: content }), "event_id");
  }

  /** Sends an `m.room.message` with the given content. */
  sendMessage(roomId: string, content: JsonObject): Promise<string> {
    return this.sendEvent(roomId, "m.room.message", content);
  }

  /** Sends plain text; pass `mentions` to add `m.mentions` (absent by default, like a legacy client). */
  sendText(roomId: string, body: string, options: { mentions?: Mentions } = {}): Promise<string> {
    return this.sendMessage(roomId, textContent(body, options));
  }

  /** Sends an `m.notice` (the message type bots use). */
  sendNotice(roomId: string, body: string): Promise<string> {
    return this.sendMessage(roomId, textContent(body, { msgtype: "m.notice" }));
  }

  /** Sends formatted text (`org.matrix.custom.html`). */
  sendHtml(roomId: string, body: string, formattedBody: string, options: { mentions?: Mentions } = {}): Promise<string> {
    return this.sendMessage(roomId, htmlContent(body, formattedBody, options));
  }

  /** Sends a structured mention (pill + `m.mentions.user_ids`). */
  sendMention(roomId: string, userId: string, displayName: string, text: string): Promise<string> {
    return this.sendMessage(roomId, mentionContent(userId, displayName, text));
  }

  /** Sends a rich reply to `parent` (with the quoted fallback unless `fallback: false`). */
  sendReply(roomId: string, parent: TimelineEvent, body: string, options: ReplyOptions = {}): Promise<string> {
    return this.sendMessage(roomId, replyContent(roomId, parent, body, options));
  }

  /** Sends a message into the thread rooted at `rootId`. */
  sendThreadMessage(roomId: string, rootId: string, body: string, options: ThreadOptions = {}): Promise<string> {
    return this.sendMessage(roomId, threadContent(rootId, body, options));
  }

  /** Edits one of this user's messages (`m.replace`). */
  sendEdit(roomId: string, originalEventId: string, newBody: string, options: { formattedBody?: string; mentions?: Mentions } = {}): Promise<string> {
    return this.sendMessage(roomId, editContent(originalEventId, newBody, options));
  }

  /** Reacts to an event with `key` (an `m.reaction` annotation). */
  react(roomId: string, eventId: string, key: string): Promise<string> {
    return this.sendEvent(roomId, "m.reaction", reactionContent(eventId, key));
  }

  /** Redacts an event; returns the redaction's event id. */
  async redact(roomId: string, eventId: string, reason?: string): Promise<string> {
    const path = `/_matrix/client/v3/rooms/${seg(roomId)}/redact/${seg(eventId)}/${seg(newTxnId())}`;
    const body = reason === undefined ? {} : { reason };
    return requireString(await this.request("PUT", path, { body }), "event_id");
  }

  /** Fetches one event by id. */
  async getEvent(roomId: string, eventId: string): Promise<TimelineEvent> {
    return parseTimelineEvent(await this.request("GET", `/_matrix/client/v3/rooms/${seg(roomId)}/event/${seg(eventId)}`));
  }

  /**
   * `getEvent` for an event another user has just sent: Dendrite may answer
   * 404 for a moment after the send returned, so a 404 is retried for up to
   * `deadlineMs`; any other error, or a 404 past the deadline, is thrown.
   */
  async getEventWhenReadable(roomId: string, eventId: string, deadlineMs = 5_000): Promise<TimelineEvent> {
    const end = Date.now() + deadlineMs;
    for (;;) {
      try {
        return await this.getEvent(roomId, eventId);
      } catch (error) {
        if (!(error instanceof SynapseHttpError) || error.status !== 404 || Date.now() >= end) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  /** The room's whole timeline, oldest-first (state events included). */
  timeline(roomId: string, options: ReadTimelineOptions = {}): Promise<TimelineEvent[]> {
    return readTimeline(this, roomId, options);
  }

  /** The timeline events sent by `sender`, oldest-first. */
  async eventsBy(roomId: string, sender: string): Promise<TimelineEvent[]> {
    return eventsBy(await this.timeline(roomId), sender);
  }

  /** Polls the timeline until `count` events match or the deadline passes. */
  waitForEvents(roomId: string, predicate: (event: TimelineEvent) => boolean, options: WaitForEventsOptions = {}): Promise<TimelineEvent[]> {
    return waitForEvents(this, roomId, predicate, options);
  }

  /** Logs this device out (its token stops working). */
  async logout(): Promise<void> {
    await this.request("POST", "/_matrix/client/v3/logout", { body: {} });
  }
}
