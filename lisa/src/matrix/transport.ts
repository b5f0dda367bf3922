import { Agent } from "undici";
import { err, ok, type Result } from "../errors.ts";
import { abortedError, badResponseError, errorFromResponse, networkError, tooLargeError } from "./codes.ts";
import type { MatrixError } from "./errors.ts";
import { readErrorBody } from "./wire.ts";

// HTTP transport of the Matrix client: its own undici Agent (shared with
// nothing else), JSON bodies, the access token only in the Authorization
// header, a deadline on every request, and error mapping to MatrixError.

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

// Error bodies are small; a proxy's large HTML error page is cut off here.
const ERROR_BODY_MAX_BYTES = 64 * 1024;

class BodyTooLarge extends Error {}

async function readCapped(body: AsyncIterable<Uint8Array> & { destroy(): unknown }, maxBytes: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total > maxBytes) {
      body.destroy();
      throw new BodyTooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

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

/** Sends Matrix requests over a dedicated undici Agent. */
export class MatrixTransport {
  readonly #agent: Agent;
  readonly #origin: string;
  readonly #basePath: string;
  readonly #options: TransportOptions;

  constructor(options: TransportOptions) {
    const base = new URL(options.homeserverUrl);
    this.#origin = base.origin;
    this.#basePath = base.pathname.replace(/\/+$/, "");
    this.#options = options;
    this.#agent = new Agent({ connect: { timeout: 10_000 }, keepAliveTimeout: 30_000 });
  }

  /** Sends one request; a 2xx JSON body is returned as unknown, everything else as a MatrixError. */
  async request(request: MatrixRequest): Promise<Result<unknown, MatrixError>> {
    const { lifetime } = this.#options;
    if (request.signal.aborted || lifetime.aborted) return err(abortedError());
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new DOMException("Matrix request deadline", "TimeoutError")), request.timeoutMs);
    const signal = AbortSignal.any([request.signal, lifetime, deadline.signal]);
    let status: number | null = null;
    try {
      const response = await this.#agent.request({
        origin: this.#origin,
        path: this.#pathWithQuery(request),
        method: request.method,
        headers: this.#headers(request),
        body: request.body === undefined ? null : JSON.stringify(request.body),
        signal,
      });
      status = response.statusCode;
      const success = status >= 200 && status < 300;
      const text = await readCapped(response.body, success ? this.#options.maxResponseBytes : ERROR_BODY_MAX_BYTES);
      const json = parseJson(text);
      if (success) return json.ok ? ok(json.value) : err(badResponseError(status));
      return err(errorFromResponse({
        status,
        body: readErrorBody(json.ok ? json.value : null),
        retryAfterHeader: headerValue(response.headers["retry-after"]),
        maxRetryAfterMs: this.#options.maxRetryAfterMs,
        nowMs: this.#options.now(),
      }));
    } catch (error) {
      if (request.signal.aborted || lifetime.aborted) return err(abortedError());
      if (error instanceof BodyTooLarge && status !== null) {
        return status >= 200 && status < 300 ? err(tooLargeError(status)) : err(errorFromResponse({
          status, body: readErrorBody(null), retryAfterHeader: undefined,
          maxRetryAfterMs: this.#options.maxRetryAfterMs, nowMs: this.#options.now(),
        }));
      }
      // A deadline or a connection failure: no usable response. The cause keeps only the error name.
      return err(networkError(error instanceof Error ? error.name : undefined));
    } finally {
      clearTimeout(timer);
    }
  }

  /** Aborts nothing by itself (the lifetime signal does); closes the agent's sockets. */
  async close(): Promise<void> {
    await this.#agent.destroy();
  }

  #pathWithQuery(request: MatrixRequest): string {
    const query = request.query === undefined ? "" : new URLSearchParams(request.query).toString();
    return `${this.#basePath}${request.path}${query === "" ? "" : `?${query}`}`;
  }

  #headers(request: MatrixRequest): Record<string, string> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (request.body !== undefined) headers["content-type"] = "application/json";
    if (request.accessToken !== null) headers["authorization"] = `Bearer ${request.accessToken}`;
    return headers;
  }
}
