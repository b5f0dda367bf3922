// One client connection: frame limits, the hello-first rule, dispatch, and
// server-to-client calls. Independent of the socket library so it can be
// driven directly in unit tests.
import type { Outcome } from "../domain/protocol-ports.ts";
import { isErrorCode, ok } from "../domain/errors.ts";
import { fail } from "../domain/protocol-ports.ts";
import type { Conn, Handler, ProtocolDeps } from "./context.ts";
import { dispatch } from "./dispatch.ts";
import { decodeFrame, encodeError, encodeRequest, RPC, rpcError } from "./frames.ts";
import { handleHello } from "./hello.ts";
import { stopAll } from "./subscriptions.ts";

/** Close code when the first frame is not hello, or hello is late. */
export const CLOSE_HELLO_REQUIRED = 4400;

/** The socket operations a connection needs. */
export interface RawSocket {
  send(text: string): void;
  close(code: number, reason: string): void;
  readonly bufferedAmount: number;
  /** Holds the sends until the matching `uncork`, which writes them at once (optional: without it each send is its own write). */
  cork?(): void;
  uncork?(): void;
}

/** Inbound events from the socket library. */
export interface ConnectionHandle {
  readonly conn: Conn;
  message(text: string, byteLength: number, isBinary: boolean): void;
  closed(): void;
}

interface PendingCall {
  readonly settle: (outcome: Outcome<unknown>) => void;
  readonly timer: ReturnType<typeof setTimeout>;
}

/** Server hooks a connection uses. */
export interface ConnectionHost {
  readonly deps: ProtocolDeps;
  readonly table: Readonly<Record<string, Handler>>;
  closeSession(authSessionId: string): void;
  forget(conn: Conn): void;
}

/** Opens the protocol state of one accepted socket. */
export function openConnection(host: ConnectionHost, socket: RawSocket, id: string): ConnectionHandle {
  const { deps } = host;
  let state: "hello" | "ready" | "closed" = "hello";
  let callCounter = 0;
  const pending = new Map<string, PendingCall>();
  const conn: Conn = {
    id,
    access: null,
    attachments: new Map(),
    subscriptions: new Map(),
    send(text) {
      if (state !== "closed") socket.send(text);
    },
    batch(sends) {
      socket.cork?.();
      try {
        sends();
      } finally {
        socket.uncork?.();
      }
    },
    close(code, reason) {
      if (state === "closed") return;
      socket.close(code, reason);
      closed();
    },
    bufferedAmount: () => socket.bufferedAmount,
    closeSession: (authSessionId) => host.closeSession(authSessionId),
    call(method, params, timeoutMs) {
      if (state !== "ready") return Promise.resolve(fail("endpoint_disconnected"));
      const callId = `s${++callCounter}`;
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          pending.delete(callId);
          resolve(fail("endpoint_timeout", true));
        }, timeoutMs);
        pending.set(callId, { settle: resolve, timer });
        socket.send(encodeRequest(callId, method, params));
      });
    },
  };
  const helloTimer = setTimeout(() => {
    if (state === "hello") conn.close(CLOSE_HELLO_REQUIRED, "hello_timeout");
  }, deps.limits.helloTimeoutMs);

  function closed(): void {
    if (state === "closed") return;
    state = "closed";
    clearTimeout(helloTimer);
    stopAll(conn);
    deps.endpoints.disposeConnection(conn.id);
    for (const call of pending.values()) {
      clearTimeout(call.timer);
      call.settle(fail("endpoint_disconnected"));
    }
    pending.clear();
    host.forget(conn);
  }

  function settle(callId: unknown, outcome: Outcome<unknown>): void {
    if (typeof callId !== "string") return;
    const call = pending.get(callId);
    if (call === undefined) return;
    pending.delete(callId);
    clearTimeout(call.timer);
    call.settle(outcome);
  }

  function message(text: string, byteLength: number, isBinary: boolean): void {
    if (state === "closed") return;
    if (isBinary) {
      conn.send(encodeError(null, rpcError("binary_unsupported", false, RPC.invalidRequest)));
      return;
    }
    if (byteLength > deps.limits.maxFrameBytes) {
      deps.log("frame.refused", { code: "frame_too_large" });
      conn.send(encodeError(null, rpcError("frame_too_large", false, RPC.invalidRequest)));
      return;
    }
    const frame = decodeFrame(text);
    if (state === "hello" && !(frame.kind === "request" && frame.method === "hello")) {
      // The first frame must be hello; anything else ends the connection.
      conn.send(encodeError(frame.kind === "request" ? frame.id : null, frame.kind === "invalid" ? frame.error : rpcError("hello_required")));
      conn.close(CLOSE_HELLO_REQUIRED, "hello_required");
      return;
    }
    switch (frame.kind) {
      case "invalid":
        conn.send(encodeError(frame.id, frame.error));
        return;
      case "notification":
        return;
      case "result":
        settle(frame.id, ok(frame.result));
        return;
      case "error":
        // A client's own codes stay client-side; the server knows only its vocabulary.
        settle(frame.id, fail(isErrorCode(frame.error.data.code) ? frame.error.data.code : "tool_failed"));
        return;
      case "request":
        break;
    }
    if (state === "hello") {
      clearTimeout(helloTimer);
      if (handleHello(deps, conn, frame.id, frame.params)) state = "ready";
      return;
    }
    if (frame.method === "hello") {
      conn.send(encodeError(frame.id, rpcError("already_authenticated")));
      return;
    }
    void dispatch(deps, host.table, conn, frame.id, frame.method, frame.params);
  }

  return { conn, message, closed };
}
