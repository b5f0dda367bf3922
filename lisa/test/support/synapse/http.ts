/** A non-2xx answer from the test homeserver, with the Matrix error fields when present. */
export class SynapseHttpError extends Error {
  /** HTTP status code. */
  readonly status: number;
  /** Matrix `errcode` (e.g. `M_FORBIDDEN`), or undefined when the body had none. */
  readonly errcode: string | undefined;
  /** The parsed response body (an object when it was JSON). */
  readonly body: unknown;

  constructor(method: string, path: string, status: number, body: unknown) {
    const errcode = readString(body, "errcode");
    super(`${method} ${path} failed: HTTP ${status}${errcode === undefined ? "" : ` ${errcode}`} ${readString(body, "error") ?? ""}`.trim());
    this.name = "SynapseHttpError";
    this.status = status;
    this.errcode = errcode;
    this.body = body;
  }
}

/** Options of one request to the homeserver. */
export interface RequestOptions {
  accessToken?: string;
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  /** Per-request deadline (default 30 s). */
  timeoutMs?: number;
}

/** A JSON object as returned by the homeserver. */
export type JsonObject = Record<string, unknown>;

const DEFAULT_TIMEOUT_MS = 30_000;
const MAX_RATE_LIMIT_RETRIES = 5;
const MAX_RETRY_AFTER_MS = 5_000;

function readString(body: unknown, key: string): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const value = (body as Record<string, unknown>)[key];
  return typeof value === "string" ? value : undefined;
}

function retryAfterMs(body: unknown): number {
  if (typeof body === "object" && body !== null) {
    const value = (body as Record<string, unknown>)["retry_after_ms"];
    if (typeof value === "number" && value >= 0) return Math.min(value, MAX_RETRY_AFTER_MS);
  }
  return 500;
}

function buildUrl(baseUrl: string, path: string, query: RequestOptions["query"]): string {
  const url = new URL(path, baseUrl);
  if (url.hostname !== "127.0.0.1") throw new Error(`test traffic must stay on 127.0.0.1, not ${url.hostname}`);
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  return url.toString();
}

async function parseBody(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === "") return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** One JSON request; retries 429 a few times (bounded waits) and throws SynapseHttpError on failure. */
export async function requestJson(baseUrl: string, method: string, path: string, options: RequestOptions = {}): Promise<JsonObject> {
  const url = buildUrl(baseUrl, path, options.query);
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.accessToken !== undefined) headers["authorization"] = `Bearer ${options.accessToken}`;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  for (let attempt = 0; ; attempt += 1) {
    const response = await fetch(url, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    });
    const body = await parseBody(response);
    if (response.status === 429 && attempt < MAX_RATE_LIMIT_RETRIES) {
      await new Promise((resolve) => setTimeout(resolve, retryAfterMs(body)));
      continue;
    }
    if (!response.ok) throw new SynapseHttpError(method, path, response.status, body);
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw new SynapseHttpError(method, path, response.status, body);
    }
    return body as JsonObject;
  }
}

/** Percent-encodes one path segment (room ids, event ids, user ids). */
export function seg(value: string): string {
  return encodeURIComponent(value);
}

/** Reads a required string field from a homeserver response. */
export function requireString(body: JsonObject, key: string): string {
  const value = body[key];
  if (typeof value !== "string") throw new Error(`homeserver response lacks string field "${key}"`);
  return value;
}
