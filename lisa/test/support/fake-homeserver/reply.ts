// Response values of the fake's handlers: a status and a JSON body.

/** A response the HTTP layer writes (or drops, under a fault). */
export interface Reply {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/** 200 with `body`. */
export function okReply(body: unknown): Reply {
  return { status: 200, body };
}

/** A standard Matrix error body `{errcode, error, ...extra}`. */
export function errorReply(status: number, errcode: string, error: string, extra: Readonly<Record<string, unknown>> = {}): Reply {
  return { status, body: { errcode, error, ...extra } };
}

/** 429 M_LIMIT_EXCEEDED (or another status/errcode) with `retry_after_ms` and a matching Retry-After header. */
export function retryReply(status: number, errcode: string, error: string, retryAfterMs: number): Reply {
  const headers = { "retry-after": String(Math.max(0, Math.ceil(retryAfterMs / 1000))) };
  return { status, body: { errcode, error, retry_after_ms: retryAfterMs }, headers };
}

/** Narrows an unknown JSON value to a plain object. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
