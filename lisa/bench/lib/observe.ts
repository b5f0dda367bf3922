// Timestamps of HTTP traffic at the fakes, taken inside the bench process
// (no proxy hop, no change to the fakes): a request's arrival through Node's
// diagnostics channel "http.server.request.start" (headers parsed), and a
// response's delivery as the moment the fake calls `res.end()` (the bytes go
// to the kernel in that call or its uncork tick). The "finish" event would be
// later by up to one event-loop turn of the bench process, which showed as
// impossible sub-0.1 ms client round trips.
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { ServerResponse, type IncomingMessage } from "node:http";
import { performance } from "node:perf_hooks";

/** Header the baseline scripts send so their requests can be told from Lisa's. */
export const CLIENT_HEADER = "x-bench-client";

/** One observed moment of one HTTP exchange. */
export interface HttpMoment {
  /** `performance.now()` of the bench process, in ms. */
  readonly at: number;
  /** "arrived": request headers parsed; "finished": the server called `res.end()`. */
  readonly phase: "arrived" | "finished";
  readonly method: string;
  /** Path without the query string (still percent-encoded). */
  readonly path: string;
  /** Local port of the serving socket (tells the fakes apart). */
  readonly port: number;
  /** The `x-bench-client` header, or "lisa" when absent. */
  readonly client: string;
}

interface Waiter {
  readonly match: (moment: HttpMoment) => boolean;
  remaining: number;
  readonly resolve: () => void;
}

interface ServerMessage {
  readonly request: IncomingMessage;
}

type End = ServerResponse["end"];

/** Records every request arrival and response end of every node:http server in this process. */
export class HttpObserver {
  readonly moments: HttpMoment[] = [];
  readonly #waiters = new Set<Waiter>();
  readonly #onStart = (message: unknown): void => this.#record((message as ServerMessage).request, "arrived");
  readonly #originalEnd: End;

  /** Starts recording every node:http server of this process (one observer at a time). */
  constructor() {
    subscribe("http.server.request.start", this.#onStart);
    const original = ServerResponse.prototype.end;
    this.#originalEnd = original;
    const record = (request: IncomingMessage): void => this.#record(request, "finished");
    ServerResponse.prototype.end = function end(this: ServerResponse, ...args: unknown[]) {
      if (!this.writableEnded) record(this.req);
      return (original as (...a: unknown[]) => ServerResponse).apply(this, args);
    } as End;
  }

  /** Stops recording. */
  close(): void {
    unsubscribe("http.server.request.start", this.#onStart);
    ServerResponse.prototype.end = this.#originalEnd;
  }

  /** Forgets what was recorded so far. */
  clear(): void {
    this.moments.length = 0;
  }

  /** The first moment after `after` (ms) that satisfies `match`, or undefined. */
  first(after: number, match: (moment: HttpMoment) => boolean): HttpMoment | undefined {
    return this.moments.find((m) => m.at >= after && match(m));
  }

  /** Every moment after `after` that satisfies `match`. */
  all(after: number, match: (moment: HttpMoment) => boolean): HttpMoment[] {
    return this.moments.filter((m) => m.at >= after && match(m));
  }

  /**
   * Resolves once `count` moments recorded from now on satisfy `match`. The
   * check costs one predicate call per moment, so waiting never slows the
   * fakes down (a predicate over the fake's whole room history would, and
   * would delay the very timestamps being taken).
   */
  waitFor(match: (moment: HttpMoment) => boolean, count: number, timeoutMs: number, what: string): Promise<void> {
    if (count <= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(new Error(`bench: timed out waiting for ${what}`));
      }, timeoutMs);
      const waiter: Waiter = {
        match, remaining: count,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      this.#waiters.add(waiter);
    });
  }

  #record(request: IncomingMessage, phase: HttpMoment["phase"]): void {
    const at = performance.now();
    const url = request.url ?? "/";
    const query = url.indexOf("?");
    const header = request.headers[CLIENT_HEADER];
    const moment: HttpMoment = {
      at,
      phase,
      method: request.method ?? "GET",
      path: query === -1 ? url : url.slice(0, query),
      port: request.socket?.localPort ?? 0,
      client: typeof header === "string" ? header : "lisa",
    };
    this.moments.push(moment);
    for (const waiter of this.#waiters) {
      if (!waiter.match(moment)) continue;
      waiter.remaining -= 1;
      if (waiter.remaining > 0) continue;
      this.#waiters.delete(waiter);
      waiter.resolve();
    }
  }
}

/** A matcher of a finished reply `PUT /send` of `client` at the fake listening on `port`. */
export function replySent(client: string, port: number): (moment: HttpMoment) => boolean {
  return (m) => m.client === client && m.port === port && m.phase === "finished" && endpointIs(m, "send");
}

/** Matches one endpoint of the Matrix client-server API by the path's shape. */
export function endpointIs(moment: HttpMoment, endpoint: "sync" | "send" | "typing" | "context" | "messages" | "login"): boolean {
  switch (endpoint) {
    case "sync": return moment.path.endsWith("/sync");
    case "send": return moment.method === "PUT" && moment.path.includes("/send/");
    case "typing": return moment.method === "PUT" && moment.path.includes("/typing/");
    case "context": return moment.path.includes("/context/");
    case "messages": return moment.path.endsWith("/messages");
    case "login": return moment.path.endsWith("/login");
  }
}
