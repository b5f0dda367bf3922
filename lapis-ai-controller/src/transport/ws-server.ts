// The WebSocket server (ws 8.x) on 127.0.0.1 by default. The request URL is
// never read: credentials travel only in the hello frame, and a `?token=` is
// ignored (WebSocket tickets stay an unissued seam, P-API-12).
import type { RawData, WebSocket } from "ws";
import { WebSocketServer } from "ws";
import type { Result } from "../domain/errors.ts";
import { ok } from "../domain/errors.ts";
import { fail } from "../domain/protocol-ports.ts";
import type { ConnectionHandle, ConnectionHost, RawSocket } from "./connection.ts";
import { openConnection } from "./connection.ts";
import type { Handler, ProtocolDeps } from "./context.ts";
import { CLOSE_UNAUTHORIZED, dispatchTable } from "./dispatch.ts";
import { MAX_FRAME_BYTES_CEILING } from "./frames.ts";
import type { IncomingMessage } from "node:http";
import { hostAllowed, originAllowed } from "../domain/loopback-host.ts";

/** Close code when the connection limit is reached. */
export const CLOSE_TRY_AGAIN = 1013;
const SHUTDOWN_GRACE_MS = 2000;

/** A listening protocol server. */
export interface ProtocolServer {
  readonly port: number;
  readonly url: string;
  connectionCount(): number;
  /** Closes every connection and the listener; resolves within a bounded grace period. */
  close(): Promise<void>;
}

function textOf(data: RawData): { text: string; bytes: number } {
  const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
  return { text: buffer.toString("utf8"), bytes: buffer.length };
}

/**
 * The socket as a connection drives it, with cork/uncork of its TCP stream:
 * `ws` writes each frame on its own, so a page of events was one write (one
 * wake-up of the reader) per event; corked, the frames sent in between leave
 * in one writev when uncorked. Without a stream to cork each send writes alone.
 */
export function corkable(socket: WebSocket): RawSocket {
  const stream = (socket as unknown as { _socket?: { cork?: () => void; uncork?: () => void } })._socket;
  return {
    send: (text) => socket.send(text),
    close: (code, reason) => socket.close(code, reason),
    get bufferedAmount() { return socket.bufferedAmount; },
    cork: () => stream?.cork?.(),
    uncork: () => stream?.uncork?.(),
  };
}

/** Starts listening; fails `service_unavailable` when the address cannot be bound. */
export async function startWsServer(
  deps: ProtocolDeps,
  extraMethods: Readonly<Record<string, Handler>> = {},
): Promise<Result<ProtocolServer>> {
  const table = dispatchTable(extraMethods);
  const handles = new Set<ConnectionHandle>();
  const sockets = new Map<ConnectionHandle, WebSocket>();
  let counter = 0;
  const host: ConnectionHost = {
    deps,
    table,
    closeSession(authSessionId) {
      for (const handle of [...handles]) {
        if (handle.conn.access?.authSessionId === authSessionId) handle.conn.close(CLOSE_UNAUTHORIZED, "unauthorized");
      }
    },
    forget(conn) {
      for (const handle of handles) if (handle.conn === conn) {
        handles.delete(handle);
        sockets.delete(handle);
      }
    },
  };
  let boundPort = deps.limits.port;
  const wss = new WebSocketServer({
    host: deps.limits.host,
    port: deps.limits.port,
    maxPayload: MAX_FRAME_BYTES_CEILING,
    perMessageDeflate: false,
    clientTracking: false,
    // Before the upgrade: a foreign Host (DNS rebinding) or an unlisted browser Origin gets 403 and no socket.
    verifyClient: (info: { origin?: string; req: IncomingMessage }, done: (ok: boolean, status?: number, reason?: string) => void) => {
      if (!hostAllowed(info.req.headers.host, boundPort, deps.limits.host)) {
        deps.log("connection.refused", { code: "host_forbidden" });
        return done(false, 403, "Forbidden");
      }
      if (!originAllowed(info.req.headers.origin, deps.limits.allowedOrigins)) {
        deps.log("connection.refused", { code: "origin_forbidden" });
        return done(false, 403, "Forbidden");
      }
      done(true);
    },
  });
  const listening = await new Promise<boolean>((resolve) => {
    wss.once("listening", () => resolve(true));
    wss.once("error", () => resolve(false));
  });
  if (!listening) {
    wss.close();
    return fail("service_unavailable");
  }
  wss.on("error", () => deps.log("server.error", { code: "service_unavailable" }));
  wss.on("connection", (socket: WebSocket) => {
    socket.on("error", () => {});
    if (handles.size >= deps.limits.maxConnections) {
      socket.close(CLOSE_TRY_AGAIN, "connection_limit");
      return;
    }
    const handle = openConnection(host, corkable(socket), `c${++counter}`);
    handles.add(handle);
    sockets.set(handle, socket);
    socket.on("message", (data: RawData, isBinary: boolean) => {
      const { text, bytes } = textOf(data);
      handle.message(text, bytes, isBinary);
    });
    socket.on("close", () => handle.closed());
  });
  // Expired sessions lose their sockets even when idle.
  const sweep = setInterval(() => {
    for (const handle of [...handles]) {
      const access = handle.conn.access;
      if (access !== null && !deps.auth.validate(access.authSessionId).ok) handle.conn.close(CLOSE_UNAUTHORIZED, "unauthorized");
    }
  }, deps.limits.sessionSweepMs);
  sweep.unref();
  const address = wss.address();
  const port = typeof address === "object" && address !== null ? address.port : deps.limits.port;
  boundPort = port;
  const urlHost = deps.limits.host.includes(":") ? `[${deps.limits.host}]` : deps.limits.host;
  return ok({
    port,
    url: `ws://${urlHost}:${port}`,
    connectionCount: () => handles.size,
    async close() {
      clearInterval(sweep);
      const pending = [...sockets.values()];
      for (const handle of [...handles]) handle.conn.close(1001, "shutdown");
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          for (const socket of pending) socket.terminate();
          resolve();
        }, SHUTDOWN_GRACE_MS);
        timer.unref();
        wss.close(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  });
}
