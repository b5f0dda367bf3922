// Lisa's own HTTP client on node:http / node:https (LISA-HTTP-01): one instance
// per user (Matrix, LLM, web, search, a preflight probe), each with its own
// keep-alive Agents, so no headers, cookies, credentials or sockets are
// shared. Every phase has a deadline (connect: name resolution, TCP and TLS;
// headers; idle body), the caller's AbortSignal ends the exchange at any
// point, bodies are read within a cap, and no redirect is ever followed here:
// a user that follows redirects does it hop by hop and checks every hop. An
// address policy is bound to the socket through the Agent's `lookup` (the
// address that was checked is the address connected to) and `guardHost`
// decides IP literals, which never reach a lookup. A request it cannot send
// (a scheme, a header value) is refused as a value before any socket.
import type { LookupFunction, Socket } from "node:net";
import { Agent as HttpAgent, request as httpRequest, type AgentOptions, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, type RequestOptions } from "node:http";
import type { Duplex } from "node:stream";
import type { TLSSocket } from "node:tls";
import { err, ok, type Result } from "../errors.ts";
import { ResponseBody } from "./body.ts";
import { HttpFailure } from "./failure.ts";
import { causeWith, checkRequest, refusedByNode } from "./request-check.ts";

/** Settings of one client (names as the undici Agent options they replace). */
export interface HttpClientOptions {
  /** Deadline of a new connection: name resolution, TCP connect and TLS handshake, in ms. */
  readonly connectTimeout: number;
  /** Deadline from the request being sent to the response headers, in ms. */
  readonly headersTimeout: number;
  /** Longest silence between two body chunks, in ms. */
  readonly bodyTimeout: number;
  /** How long an idle keep-alive socket is kept (shortened by the server's Keep-Alive hint), in ms. */
  readonly keepAliveTimeout: number;
  /** Most sockets per origin (default: unlimited). */
  readonly connections?: number;
  /** Largest accepted response header block, in bytes (Node's default 16 KiB otherwise). */
  readonly maxHeaderSize?: number;
  /** Cap on any response body, decoded and raw alike, in bytes (each read may cap lower). */
  readonly maxResponseSize?: number;
  /** Decode gzip, deflate and br bodies (bounded by the decoded size). */
  readonly decompress?: boolean;
  /** Name resolution for every new socket (the address policy's guarded lookup). */
  readonly lookup?: LookupFunction;
  /** Refuses a connection to a host before connecting (for IP literals): an error, or null to allow. */
  readonly guardHost?: HostGuard;
}

/** One request. The method is sent as given; bodies are strings or bytes. */
export interface HttpRequest {
  readonly url: URL;
  readonly method: "GET" | "POST" | "PUT" | "DELETE";
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
  /** Ends the exchange (also while the body is read) with `http_aborted`. */
  readonly signal?: AbortSignal;
}

/** A response whose headers arrived; its body is still to be read or discarded. */
export interface HttpResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: ResponseBody;
}

/** Decides a host before a socket is opened: an error refuses it, null or undefined allows it. */
export type HostGuard = (host: string) => Error | null | undefined;

type AgentLike = HttpAgent;

/** One scheme's Agent and the function that sends through it. */
interface Transport {
  readonly agent: AgentLike;
  readonly send: (options: RequestOptions) => ClientRequest;
  /** True for TLS: a new socket is ready at `secureConnect`, not at `connect`. */
  readonly secure: boolean;
}

/** The event a socket still being set up will emit when it is ready to carry the request, or null when it is ready now. */
function pendingEvent(socket: Socket, secure: boolean): "connect" | "secureConnect" | null {
  // Node's Agent hands a freed socket to a queued request without setting `reusedSocket`,
  // so readiness is read off the socket itself: still connecting, or (TLS) not yet through
  // its handshake (`alpnProtocol` is null until the handshake completes, then a string or false).
  if (secure) return socket.connecting || (socket as TLSSocket).alpnProtocol === null ? "secureConnect" : null;
  return socket.connecting ? "connect" : null;
}

function closedFailure(): HttpFailure {
  return new HttpFailure("http_network", new Error("client closed"));
}
type CreateConnection = (options: Record<string, unknown>, callback: (error: Error | null, socket?: Duplex) => void) => Duplex | undefined;

const IDEMPOTENT = new Set(["GET", "PUT", "DELETE"]);
const STALE_SOCKET_CODES = new Set(["ECONNRESET", "EPIPE"]);
const UNLIMITED_BODY = Number.MAX_SAFE_INTEGER;

/** Adds the host guard to an Agent: refused hosts never get a socket. */
function guarded(agent: AgentLike, guardHost: HostGuard | undefined): AgentLike {
  if (guardHost === undefined) return agent;
  const target = agent as unknown as { createConnection: CreateConnection };
  const original = target.createConnection.bind(agent);
  target.createConnection = (options, callback) => {
    const refusal = guardHost(String(options["host"] ?? ""));
    if (refusal === null || refusal === undefined) return original(options, callback);
    process.nextTick(callback, refusal);
    return undefined;
  };
  return agent;
}

/** The host part of a URL as the socket connects to it (IPv6 without brackets). */
export function socketHost(url: URL): string {
  const host = url.hostname;
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

/** A keep-alive HTTP(S) client with deadlines, abort, bounded bodies and an optional address guard. */
export class HttpClient {
  readonly #options: HttpClientOptions;
  readonly #http: Transport;
  #https: Promise<Transport> | null = null;
  #closed = false;

  constructor(options: HttpClientOptions) {
    this.#options = options;
    this.#http = { agent: guarded(new HttpAgent(this.#agentOptions()), options.guardHost), send: httpRequest, secure: false };
  }

  /** Sends one request; every expected failure is a value, never a throw. */
  async request(request: HttpRequest): Promise<Result<HttpResponse, HttpFailure>> {
    const invalid = checkRequest(request.url, request.headers);
    if (invalid !== null) return err(invalid);
    if (request.signal?.aborted === true) return err(new HttpFailure("http_aborted", request.signal.reason));
    if (this.#closed) return err(closedFailure());
    const transport = request.url.protocol === "https:" ? await this.#httpsTransport() : this.#http;
    // The HTTPS transport may have been awaited: the exchange checks the signal again before it sends.
    if (this.#closed) return err(closedFailure());
    const first = await this.#exchange(request, transport);
    if (first.kind === "retry") return (await this.#exchange(request, transport, false)).result;
    return first.result;
  }

  /** Closes every socket, idle or busy (also of an HTTPS agent still being built); later requests fail. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#http.agent.destroy();
    if (this.#https !== null) (await this.#https).agent.destroy();
  }

  #agentOptions(): AgentOptions {
    const options: AgentOptions & { lookup?: LookupFunction } = {
      keepAlive: true,
      timeout: this.#options.keepAliveTimeout,
      scheduling: "lifo",
      maxSockets: this.#options.connections ?? Infinity,
    };
    if (this.#options.lookup !== undefined) options.lookup = this.#options.lookup;
    return options;
  }

  #httpsTransport(): Promise<Transport> {
    // node:https (and TLS) is loaded only when a user first needs it, and its Agent is built
    // once: concurrent first requests share the one promise, so they share the one Agent.
    this.#https ??= import("node:https").then((https) => ({
      agent: guarded(new https.Agent(this.#agentOptions()), this.#options.guardHost), send: https.request, secure: true,
    }));
    return this.#https;
  }

  #exchange(request: HttpRequest, transport: Transport, mayRetry = true): Promise<{ kind: "done" | "retry"; result: Result<HttpResponse, HttpFailure> }> {
    const options = this.#options;
    return new Promise((resolve) => {
      const { url, signal } = request;
      if (signal?.aborted === true) return resolve({ kind: "done", result: err(new HttpFailure("http_aborted", signal.reason)) });
      const headers: Record<string, string> = { ...request.headers };
      if (request.body !== undefined) headers["content-length"] = String(Buffer.byteLength(request.body));
      const requestOptions: RequestOptions = {
        agent: transport.agent, protocol: url.protocol, hostname: socketHost(url), port: url.port === "" ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`, method: request.method, headers,
        ...(options.maxHeaderSize === undefined ? {} : { maxHeaderSize: options.maxHeaderSize }),
      };
      let outgoing: ClientRequest;
      try {
        outgoing = transport.send(requestOptions);
      } catch (error) {
        return resolve({ kind: "done", result: err(refusedByNode(error)) });
      }
      let timer: NodeJS.Timeout | undefined;
      let settled = false;
      // A socket that carried an exchange before (kept alive, or handed over by the Agent's queue).
      let usedBefore = false;
      let unwatch = (): void => undefined;
      const release = (): void => signal?.removeEventListener("abort", onAbort);
      const settle = (kind: "done" | "retry", result: Result<HttpResponse, HttpFailure>): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        unwatch();
        if (!result.ok) {
          release();
          outgoing.destroy();
        }
        resolve({ kind, result });
      };
      const fail = (failure: HttpFailure): void => settle("done", err(failure));
      const deadline = (ms: number, code: "http_connect_timeout" | "http_headers_timeout"): void => {
        clearTimeout(timer);
        timer = setTimeout(() => fail(new HttpFailure(code)), ms);
      };
      const onAbort = (): void => fail(new HttpFailure("http_aborted", signal?.reason));
      signal?.addEventListener("abort", onAbort, { once: true });
      outgoing.on("socket", (socket: Socket) => {
        if (settled) return;
        const event = pendingEvent(socket, transport.secure);
        if (event === null) {
          usedBefore = true;
          return deadline(options.headersTimeout, "http_headers_timeout");
        }
        deadline(options.connectTimeout, "http_connect_timeout");
        const ready = (): void => {
          unwatch = () => undefined;
          if (!settled) deadline(options.headersTimeout, "http_headers_timeout");
        };
        socket.once(event, ready);
        unwatch = () => {
          socket.off(event, ready);
          unwatch = () => undefined;
        };
      });
      outgoing.on("response", (response: IncomingMessage) => {
        const limits = { idleMs: options.bodyTimeout, maxBytes: options.maxResponseSize ?? UNLIMITED_BODY, decompress: options.decompress === true };
        settle("done", ok({ status: response.statusCode ?? 0, headers: response.headers, body: new ResponseBody(response, { limits, contentEncoding: response.headers["content-encoding"], signal, release }) }));
      });
      // A 101 nobody asked for: node:http hands over the socket (or, unheard, just closes the request).
      outgoing.on("upgrade", (_response: IncomingMessage, socket: Duplex) => {
        socket.destroy();
        fail(new HttpFailure("http_protocol_error", causeWith("HTTP_UNEXPECTED_UPGRADE", "the server switched protocols unasked")));
      });
      outgoing.on("close", () => fail(new HttpFailure("http_network", causeWith("ECONNRESET", "the request closed before a response"))));
      outgoing.on("error", (error: NodeJS.ErrnoException) => {
        // A kept-alive socket the server closed just as it was used again: the request never reached it.
        const stale = (outgoing.reusedSocket || usedBefore) && STALE_SOCKET_CODES.has(error.code ?? "") && IDEMPOTENT.has(request.method);
        if (stale && mayRetry && !settled) {
          release();
          settle("retry", err(new HttpFailure("http_network", error)));
          return;
        }
        fail(error instanceof HttpFailure ? error : new HttpFailure("http_network", error));
      });
      outgoing.end(request.body);
    });
  }
}
