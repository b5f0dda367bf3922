// node:http front end: routing, authentication, fault injection, the request
// log, and a clean shutdown that ends long-polls and destroys every socket.

import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Accounts, Session } from "./accounts.ts";
import type { FaultQueue } from "./faults.ts";
import type { HistoryEndpoints } from "./history.ts";
import type { KeyServer } from "./keys.ts";
import { errorReply, okReply, retryReply } from "./reply.ts";
import type { Reply } from "./reply.ts";
import { matchRoute } from "./routes.ts";
import type { RouteMatch } from "./routes.ts";
import type { RoomDirectory } from "./room-state.ts";
import type { RoomStore } from "./store.ts";
import type { SyncService } from "./sync.ts";
import type { Fault, RequestInfo, RequestRecord } from "./types.ts";
import type { WriteEndpoints } from "./writes.ts";

/** The parts the front end dispatches to. */
export interface Components {
  readonly store: RoomStore;
  readonly accounts: Accounts;
  readonly sync: SyncService;
  readonly history: HistoryEndpoints;
  readonly writes: WriteEndpoints;
  readonly faults: FaultQueue;
  readonly directory: RoomDirectory;
  /** The end-to-end encryption key endpoints. */
  readonly keys: KeyServer;
}

const MAX_BODY_BYTES = 1024 * 1024;
const SPEC_VERSIONS = ["r0.6.1", "v1.1", "v1.2", "v1.3", "v1.4", "v1.5", "v1.6", "v1.7", "v1.8", "v1.9", "v1.10", "v1.11"];

type Body = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reply: Reply };

function bearerToken(req: IncomingMessage, url: URL): string | null {
  const header = req.headers.authorization;
  if (header !== undefined) return /^Bearer (.+)$/i.exec(header)?.[1] ?? "";
  return url.searchParams.get("access_token");
}

async function readBody(req: IncomingMessage): Promise<Body> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return { ok: false, reply: errorReply(413, "M_TOO_LARGE", "Request body too large") };
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString("utf8")) };
  } catch {
    return { ok: false, reply: errorReply(400, "M_NOT_JSON", "Content not JSON.") };
  }
}

/** Serves the components over HTTP on 127.0.0.1. */
export class HttpFrontend {
  /** Every request seen, oldest first. */
  readonly log: RequestRecord[] = [];
  /** Unexpected exceptions inside the fake (each also answered with 500). */
  readonly internalErrors: unknown[] = [];
  /** `/sync` requests currently being handled (long-polls included). */
  activeSyncs = 0;
  private readonly parts: Components;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly shutdown = new AbortController();
  private readonly onActivity: () => void;

  constructor(parts: Components, onActivity: () => void) {
    this.parts = parts;
    this.onActivity = onActivity;
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
  }

  /** Listens on 127.0.0.1 on an ephemeral port; returns the base URL. */
  listen(): Promise<string> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(0, "127.0.0.1", () => {
        const address = this.server.address();
        if (address === null || typeof address === "string") return reject(new Error("fake homeserver: no TCP address"));
        resolve(`http://127.0.0.1:${address.port}`);
      });
    });
  }

  /** Ends pending long-polls, destroys every socket and closes the listener. */
  async close(): Promise<void> {
    if (this.shutdown.signal.aborted) return;
    this.shutdown.abort();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? "GET";
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const token = bearerToken(req, url);
    url.searchParams.delete("access_token");
    let route: RouteMatch | null = null;
    let badPath = false;
    try {
      route = matchRoute(method, url.pathname);
    } catch {
      badPath = true;
    }
    const info: RequestInfo = {
      method,
      path: url.pathname,
      endpoint: route?.endpoint ?? "unknown",
      query: Object.fromEntries(url.searchParams),
      hasAuth: token !== null,
      userId: this.parts.accounts.peekUser(token),
    };
    const fault = this.parts.faults.take(info);
    try {
      if (fault?.kind === "drop") return this.drop(req, info, fault);
      const body = await readBody(req);
      let reply: Reply;
      if (fault?.kind === "status") {
        const message = fault.error ?? "Injected failure";
        reply = fault.retryAfterMs === undefined ? errorReply(fault.status, fault.errcode, message) : retryReply(fault.status, fault.errcode, message, fault.retryAfterMs);
      } else if (fault?.kind === "unknownPos" && !this.parts.sync.answersUnknownSinceInFull()) {
        reply = errorReply(400, "M_UNKNOWN_POS", "Unknown position");
      } else if (badPath) {
        reply = errorReply(400, "M_INVALID_PARAM", "Malformed path");
      } else if (!body.ok) {
        reply = body.reply;
      } else {
        if (fault?.kind === "expireToken" && token !== null) this.parts.accounts.expire(token);
        // Continuwuity answers a position it does not know as if no `since` had been sent.
        const seen = fault?.kind === "unknownPos" ? { ...info, query: withoutSince(info.query) } : info;
        reply = await this.dispatch(route, method, seen, token, body.value, res, fault);
      }
      if (fault?.kind === "dropAfterCommit") return this.drop(req, info, fault);
      this.write(res, reply, info, fault);
    } catch (error) {
      this.internalErrors.push(error);
      this.write(res, errorReply(500, "M_UNKNOWN", "Internal server error"), info, fault);
    }
  }

  private async dispatch(route: RouteMatch | null, method: string, info: RequestInfo, token: string | null, body: unknown, res: ServerResponse, fault: Fault | null): Promise<Reply> {
    if (route === null) return errorReply(404, "M_UNRECOGNIZED", "Unrecognized request");
    if (!route.methodAllowed) return errorReply(405, "M_UNRECOGNIZED", "Unrecognized request");
    const { accounts } = this.parts;
    switch (route.endpoint) {
      case "versions":
        return okReply({ versions: SPEC_VERSIONS, unstable_features: {} });
      case "login":
        return method === "GET" ? accounts.loginFlows() : accounts.login(body);
      case "refresh":
        return accounts.refresh(body);
      default: {
        const auth = accounts.authenticate(token);
        if (!auth.ok) return auth.reply;
        return this.authenticated(route, auth.session, info, body, res, fault);
      }
    }
  }

  private async authenticated(route: RouteMatch, session: Session, info: RequestInfo, body: unknown, res: ServerResponse, fault: Fault | null): Promise<Reply> {
    const { accounts, sync, history, writes } = this.parts;
    const [a = "", b = "", c = "", d] = route.params;
    switch (route.endpoint) {
      case "whoami":
        return okReply({ user_id: session.userId, device_id: session.deviceId, is_guest: false });
      case "logout":
        return accounts.logout(session);
      case "sync":
        return this.syncRequest(session, info, res, fault);
      case "filter":
        return sync.createFilter(session, a, body);
      case "joined_rooms":
        return writes.joinedRooms(session);
      case "messages":
        return history.messages(session, a, info.query);
      case "context":
        return history.context(session, a, b, info.query);
      case "event":
        return history.event(session, a, b);
      case "relations":
        return history.relations(session, a, b, route.params[2], d, info.query);
      case "send":
        return writes.send(session, a, b, c, body);
      case "typing":
        return writes.setTyping(session, a, b, body);
      case "state":
        return this.parts.directory.stateEvent(session, a, b, c, info.query);
      case "directory":
        return this.parts.directory.resolve(a);
      case "joined_members":
        return writes.joinedMembers(session, a);
      case "members":
        return writes.members(session, a, info.query);
      case "keys_upload":
        return this.parts.keys.upload(session, body);
      case "keys_query":
        return this.parts.keys.query(session, body);
      case "keys_claim":
        return this.parts.keys.claim(body);
      case "keys_device_signing":
        return this.parts.keys.signingUpload(session, body);
      case "keys_signatures":
        return this.parts.keys.signaturesUpload(body);
      case "send_to_device":
        return this.parts.keys.sendToDevice(session.userId, a, body);
      default:
        return errorReply(404, "M_UNRECOGNIZED", "Unrecognized request");
    }
  }

  private async syncRequest(session: Session, info: RequestInfo, res: ServerResponse, fault: Fault | null): Promise<Reply> {
    const previous = fault?.kind === "repeatLastSync" ? this.parts.sync.lastBody(session) : undefined;
    if (previous !== undefined) return okReply(previous);
    const disconnected = new AbortController();
    res.on("close", () => disconnected.abort());
    this.activeSyncs += 1;
    this.onActivity();
    try {
      return await this.parts.sync.handle(session, info.query, AbortSignal.any([disconnected.signal, this.shutdown.signal]));
    } finally {
      this.activeSyncs -= 1;
      this.onActivity();
    }
  }

  private drop(req: IncomingMessage, info: RequestInfo, fault: Fault): void {
    req.socket.destroy();
    this.record(info, "dropped", fault);
  }

  private write(res: ServerResponse, reply: Reply, info: RequestInfo, fault: Fault | null): void {
    // A client that went away (or a shutdown) leaves nothing to write to.
    if (res.destroyed || res.socket === null || res.socket.destroyed) return this.record(info, "dropped", fault);
    res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
    res.end(JSON.stringify(reply.body));
    this.record(info, reply.status, fault);
  }

  private record(info: RequestInfo, status: number | "dropped", fault: Fault | null): void {
    this.log.push({ ...info, status, fault: fault?.kind ?? null, at: this.parts.store.now() });
    this.onActivity();
  }
}

function withoutSince(query: Readonly<Record<string, string>>): Record<string, string> {
  const { since: _since, ...rest } = query;
  return rest;
}
