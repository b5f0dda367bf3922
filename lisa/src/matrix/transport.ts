import { err, ok, type Result } from "../errors.ts";
import { HttpClient } from "../http/client.ts";
import type { HttpFailure } from "../http/failure.ts";
import { abortedError, badResponseError, errorFromResponse, networkError, tooLargeError } from "./codes.ts";
import type { MatrixError } from "./errors.ts";
import { readErrorBody } from "./wire.ts";

// HTTP transport of the Matrix client: its own HttpClient (keep-alive
// sockets shared with nothing else), JSON bodies, the access token only in
// the Authorization header, a deadline on every request, gzip/deflate/br
// bodies decoded within the size cap, and error mapping to MatrixError.

/** HTTP methods the Matrix client uses. */
export type MatrixMethod = "GET" | "POST" | "PUT";

/** One Matrix HTTP request. */
export interface MatrixRequest {
  readonly method: MatrixMethod;
  /** Absolute path below the homeserver base, already percent-encoded (`/_matrix/client/v3/...`). */
  readonly path: string;
  readonly query?: Readonly<Record<string, string>>;
  /** JSON request body. */
  readonly body?: unknown;
  /** Sent as `Authorization: Bearer`; null for unauthenticated endpoints. */
  readonly accessToken: string | null;
  readonly signal: AbortSignal;
  /** Deadline of this single attempt. */
  readonly timeoutMs: number;
}

/** Settings of the transport. */
export interface TransportOptions {
  readonly homeserverUrl: string;
  /** Largest accepted response body. */
  readonly maxResponseBytes: number;
  /** Ceiling of a server's rate-limit hint. */
  readonly maxRetryAfterMs: number;
  /** Clock for `Retry-After` dates. */
  readonly now: () => number;
  /** Aborts every request when the client closes. */
  readonly lifetime: AbortSignal;
}

// Sync and context bodies are large JSON; a proxy in front of the homeserver may compress them.
const ACCEPT_ENCODING = "gzip, deflate, br";

// Error bodies are small; a proxy's large HTML error page is cut off here.
const ERROR_BODY_MAX_BYTES = 64 * 1024;

// Every phase of one attempt is also bounded by the attempt's own deadline.
const CONNECT_TIMEOUT_MS = 10_000;
const KEEP_ALIVE_TIMEOUT_MS = 30_000;
// Headers and body are bounded by each attempt's own deadline (timeoutMs), not per phase.
const ATTEMPT_BOUNDED_MS = 2_147_483_647;

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Sends Matrix requests over a dedicated HttpClient. */
export class MatrixTransport {
  readonly #client: HttpClient;
  readonly #origin: string;
  readonly #basePath: string;
  readonly #options: TransportOptions;

  constructor(options: TransportOptions) {
    const base = new URL(options.homeserverUrl);
    this.#origin = base.origin;
    this.#basePath = base.pathname.replace(/\/+$/, "");
    this.#options = options;
    this.#client = new HttpClient({
      connectTimeout: CONNECT_TIMEOUT_MS,
      headersTimeout: ATTEMPT_BOUNDED_MS,
      bodyTimeout: ATTEMPT_BOUNDED_MS,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      decompress: true,
    });
  }

  /** Sends one request; a 2xx JSON body is returned as unknown, everything else as a MatrixError. */
  async request(request: MatrixRequest): Promise<Result<unknown, MatrixError>> {
    const { lifetime } = this.#options;
    if (request.signal.aborted || lifetime.aborted) return err(abortedError());
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new DOMException("Matrix request deadline", "TimeoutError")), request.timeoutMs);
    const signal = AbortSignal.any([request.signal, lifetime, deadline.signal]);
    try {
      const sent = await this.#client.request({
        url: new URL(`${this.#origin}${this.#pathWithQuery(request)}`),
        method: request.method,
        headers: this.#headers(request),
        ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
        signal,
      });
      if (!sent.ok) return err(this.#failure(request, sent.error));
      const response = sent.value;
      const status = response.status;
      const success = status >= 200 && status < 300;
      const text = await response.body.text(success ? this.#options.maxResponseBytes : ERROR_BODY_MAX_BYTES);
      if (!text.ok) {
        if (text.error.code !== "http_body_too_large") return err(this.#failure(request, text.error));
        return success ? err(tooLargeError(status)) : err(errorFromResponse({
          status, body: readErrorBody(null), retryAfterHeader: undefined,
          maxRetryAfterMs: this.#options.maxRetryAfterMs, nowMs: this.#options.now(),
        }));
      }
      const json = parseJson(text.value);
      if (success) return json.ok ? ok(json.value) : err(badResponseError(status));
      return err(errorFromResponse({
        status,
        body: readErrorBody(json.ok ? json.value : null),
        retryAfterHeader: headerValue(response.headers["retry-after"]),
        maxRetryAfterMs: this.#options.maxRetryAfterMs,
        nowMs: this.#options.now(),
      }));
    } finally {
      clearTimeout(timer);
    }
  }

  /** A failed exchange: aborted by the caller or the client's lifetime, or no usable response. */
  #failure(request: MatrixRequest, failure: HttpFailure): MatrixError {
    if (request.signal.aborted || this.#options.lifetime.aborted) return abortedError();
    // A deadline or a connection failure: no usable response. The cause keeps only the error's name.
    const cause = failure.code === "http_aborted" ? (failure.cause as Error | undefined) : failure.cause ?? failure;
    return networkError(cause instanceof Error ? cause.name : failure.code);
  }

  /** Aborts nothing by itself (the lifetime signal does); closes the agent's sockets. */
  async close(): Promise<void> {
    await this.#client.close();
  }

  #pathWithQuery(request: MatrixRequest): string {
    const query = request.query === undefined ? "" : new URLSearchParams(request.query).toString();
    return `${this.#basePath}${request.path}${query === "" ? "" : `?${query}`}`;
  }

  #headers(request: MatrixRequest): Record<string, string> {
    const headers: Record<string, string> = { accept: "application/json", "accept-encoding": ACCEPT_ENCODING };
    if (request.body !== undefined) headers["content-type"] = "application/json";
    if (request.accessToken !== null) headers["authorization"] = `Bearer ${request.accessToken}`;
    return headers;
  }
}
