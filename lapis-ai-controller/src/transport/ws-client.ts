// A JSON-RPC peer over a WHATWG WebSocket: browser-safe (no Node globals),
// imports only frames.ts. Used by the SDK client (client.ts). On Deno alone the
// default socket is the `ws` package's, loaded when first needed (see
// defaultSocketFactory); a browser or Node never loads it.
import type { FrameId } from "./frames.ts";
import { decodeFrame, encodeError, encodeRequest, encodeResult, rpcError } from "./frames.ts";

/** The part of the WHATWG WebSocket this peer uses. */
export interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "open" | "message" | "close" | "error", listener: (event: any) => void): void;
}

/** Creates a socket for a URL (or a promise of one, for a factory that loads its implementation first). */
export type SocketFactory = (url: string) => SocketLike | Promise<SocketLike>;

/** A failure as the client sees it: a stable code and whether a retry may succeed. */
export interface RpcFailure {
  readonly code: string;
  readonly retryable: boolean;
  /** When a retry can succeed (ms since the epoch), where the service said so (e.g. `quota_exceeded`). */
  readonly retryAt?: number;
}

/** A request's outcome; `raw` is the result's exact JSON text. */
export type RpcOutcome =
  | { readonly ok: true; readonly value: unknown; readonly raw: string }
  | { readonly ok: false; readonly error: RpcFailure };

/** Callbacks for what the server sends unasked. */
export interface PeerHandlers {
  notification?(method: string, params: Record<string, unknown>): void;
  request?(method: string, params: Record<string, unknown>): Promise<RpcOutcome>;
  closed?(code: number, reason: string): void;
}

const OPEN = 1;

/** True on Deno, told by its user agent (`Deno/2.x`); a browser or Node says otherwise. */
export function runsOnDeno(agent: unknown = (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent): boolean {
  return typeof agent === "string" && agent.startsWith("Deno/");
}

/** What this file uses of the `ws` package. */
type WsModule = { readonly WebSocket: new (url: string, options: { perMessageDeflate: boolean }) => unknown };

const loadWs = (): Promise<WsModule> => import("ws") as Promise<WsModule>;

/**
 * The `ws` package's client socket, which speaks the same WHATWG surface. Deno's
 * own WebSocket client leaves Nagle's algorithm on (TCP_NODELAY 0) and writes a
 * frame of about 1 KiB or more as two segments, header then payload: the payload
 * waits for the controller's delayed ACK of the header, 40 ms on Linux, on every
 * such frame (a recall's or a context endpoint's answer). `ws` over Deno's
 * node:net sets TCP_NODELAY and hands a frame to the kernel in one writev.
 * Where `ws` cannot be loaded (Deno resolves bare names only for code inside a
 * package or config that declares them), the runtime's own WebSocket serves:
 * slower on large frames, never unable to connect.
 */
export async function nodeNetSocket(url: string, load: () => Promise<WsModule> = loadWs): Promise<SocketLike> {
  let ws: WsModule;
  try {
    ws = await load();
  } catch {
    return new WebSocket(url) as unknown as SocketLike;
  }
  return new ws.WebSocket(url, { perMessageDeflate: false }) as unknown as SocketLike;
}

/** Default socket factory: the runtime's WHATWG WebSocket, or on Deno the `ws` package's (nodeNetSocket). */
export const defaultSocketFactory: SocketFactory = (url) => runsOnDeno() ? nodeNetSocket(url) : new WebSocket(url) as unknown as SocketLike;

function failure(code: string, retryable: boolean): RpcOutcome {
  return { ok: false, error: { code, retryable } };
}

function closeQuietly(socket: SocketLike): void {
  try {
    socket.close();
  } catch {
    // already closed
  }
}

/** Extracts the exact result text of a response frame without re-serializing it. */
function rawResult(text: string, value: unknown): string {
  const marker = text.indexOf('"result":');
  return marker >= 0 && text.endsWith("}") ? text.slice(marker + 9, -1) : JSON.stringify(value);
}

/** One open connection to the controller. */
export class RpcPeer {
  readonly #socket: SocketLike;
  readonly #pending = new Map<FrameId, { resolve: (o: RpcOutcome) => void; timer: ReturnType<typeof setTimeout> }>();
  readonly #handlers: PeerHandlers;
  #counter = 0;
  #closed = false;

  private constructor(socket: SocketLike, handlers: PeerHandlers) {
    this.#socket = socket;
    this.#handlers = handlers;
    socket.addEventListener("message", (event: { data: unknown }) => this.#onMessage(event.data));
    socket.addEventListener("close", (event: { code?: number; reason?: string }) => this.#onClose(event.code ?? 1006, event.reason ?? ""));
  }

  /** Opens a socket and waits for it (and for the factory, where it loads first), at most `timeoutMs`. */
  static open(url: string, factory: SocketFactory, handlers: PeerHandlers, timeoutMs: number): Promise<RpcPeer | RpcFailure> {
    return new Promise((resolve) => {
      let socket: SocketLike | null = null;
      let settled = false;
      const finish = (value: RpcPeer | RpcFailure) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (!(value instanceof RpcPeer) && socket !== null) closeQuietly(socket);
        resolve(value);
      };
      const timer = setTimeout(() => finish({ code: "connect_timeout", retryable: true }), timeoutMs);
      const watch = (made: SocketLike) => {
        socket = made;
        if (settled) return closeQuietly(made); // the deadline passed while the factory loaded
        made.addEventListener("open", () => finish(new RpcPeer(made, handlers)));
        made.addEventListener("error", () => finish({ code: "connect_failed", retryable: true }));
        made.addEventListener("close", () => finish({ code: "connect_failed", retryable: true }));
      };
      try {
        const made = factory(url);
        if (made instanceof Promise) made.then(watch, () => finish({ code: "connect_failed", retryable: true }));
        else watch(made);
      } catch {
        finish({ code: "connect_failed", retryable: true });
      }
    });
  }

  /** True until the socket closes. */
  get open(): boolean {
    return !this.#closed && this.#socket.readyState === OPEN;
  }

  /** Sends a request and settles on its reply, the deadline or the close. */
  request(method: string, params: Record<string, unknown>, timeoutMs: number): Promise<RpcOutcome> {
    if (!this.open) return Promise.resolve(failure("connection_lost", true));
    const id = `c${++this.#counter}`;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        resolve(failure("request_timeout", true));
      }, timeoutMs);
      this.#pending.set(id, { resolve, timer });
      try {
        this.#socket.send(encodeRequest(id, method, params));
      } catch {
        clearTimeout(timer);
        this.#pending.delete(id);
        resolve(failure("connection_lost", true));
      }
    });
  }

  /** Closes the socket; pending requests settle `connection_lost`. */
  close(code = 1000, reason = "client_close"): void {
    try {
      this.#socket.close(code, reason);
    } catch {
      // already closing
    }
    this.#onClose(code, reason);
  }

  #onMessage(data: unknown): void {
    if (typeof data !== "string") return;
    const frame = decodeFrame(data);
    if (frame.kind === "result" || frame.kind === "error") {
      const pending = frame.id === null ? undefined : this.#pending.get(frame.id);
      if (pending === undefined || frame.id === null) return;
      this.#pending.delete(frame.id);
      clearTimeout(pending.timer);
      pending.resolve(frame.kind === "result"
        ? { ok: true, value: frame.result, raw: rawResult(data, frame.result) }
        : { ok: false, error: { code: frame.error.data.code, retryable: frame.error.data.retryable, ...(frame.error.data.retryAt === undefined ? {} : { retryAt: frame.error.data.retryAt }) } });
    } else if (frame.kind === "notification") {
      this.#handlers.notification?.(frame.method, frame.params);
    } else if (frame.kind === "request") {
      void this.#answer(frame.id, frame.method, frame.params);
    }
  }

  async #answer(id: FrameId, method: string, params: Record<string, unknown>): Promise<void> {
    const handler = this.#handlers.request;
    let outcome: RpcOutcome;
    try {
      outcome = handler === undefined ? failure("method_not_found", false) : await handler(method, params);
    } catch {
      outcome = failure("internal_error", false);
    }
    if (!this.open) return;
    this.#socket.send(outcome.ok ? encodeResult(id, outcome.value) : encodeError(id, rpcError(outcome.error.code, outcome.error.retryable)));
  }

  #onClose(code: number, reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const { resolve, timer } of this.#pending.values()) {
      clearTimeout(timer);
      resolve(failure("connection_lost", true));
    }
    this.#pending.clear();
    this.#handlers.closed?.(code, reason);
  }
}
