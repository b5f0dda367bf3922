import { MatrixError } from "./errors.ts";

// Stable codes of Matrix failures and the small constructors that build them.
// Only these codes cross into logs and other modules; response bodies never do.

/** Every `MatrixError.code` this folder produces. */
export const MATRIX_CODES = {
  rateLimited: "matrix_rate_limited",
  unknownToken: "matrix_unknown_token",
  unknownPos: "matrix_unknown_pos",
  network: "matrix_network",
  serverError: "matrix_server_error",
  forbidden: "matrix_forbidden",
  notFound: "matrix_not_found",
  badResponse: "matrix_bad_response",
  responseTooLarge: "matrix_response_too_large",
  requestFailed: "matrix_request_failed",
  aborted: "matrix_aborted",
  roomMismatch: "matrix_room_mismatch",
  loginFailed: "matrix_login_failed",
  noPasswordLogin: "matrix_no_password_login",
  identityMismatch: "matrix_identity_mismatch",
  sessionRenewed: "matrix_session_renewed",
} as const;

/** Codes of authentication failures that only an operator can fix (exit status 78 upstream). */
export const PERMANENT_AUTH_CODES: readonly string[] = [
  MATRIX_CODES.loginFailed,
  MATRIX_CODES.noPasswordLogin,
  MATRIX_CODES.identityMismatch,
];

/** True when the error is a permanent authentication failure (wrong password, identity, no password flow). */
export function isPermanentAuthError(error: unknown): boolean {
  return error instanceof MatrixError && PERMANENT_AUTH_CODES.includes(error.code);
}

const NO_RESPONSE = { errcode: null, httpStatus: null, retryAfterMs: null } as const;

/**
 * The access token was refused and renewed, and the request was not repeated
 * under the new token (a send whose earlier attempt may have reached the room).
 */
export function sessionRenewedError(): MatrixError {
  return new MatrixError(MATRIX_CODES.sessionRenewed, NO_RESPONSE, true);
}

/** The caller (or the client's shutdown) aborted the request. */
export function abortedError(): MatrixError {
  return new MatrixError(MATRIX_CODES.aborted, NO_RESPONSE, false);
}

/** No usable response arrived (connection failure, reset, per-request deadline). */
export function networkError(cause?: unknown): MatrixError {
  return new MatrixError(MATRIX_CODES.network, NO_RESPONSE, true, cause);
}

/** A 2xx response whose body is not the documented shape. */
export function badResponseError(httpStatus: number | null): MatrixError {
  return new MatrixError(MATRIX_CODES.badResponse, { errcode: null, httpStatus, retryAfterMs: null }, false);
}

/** A response body larger than the configured cap. */
export function tooLargeError(httpStatus: number): MatrixError {
  return new MatrixError(MATRIX_CODES.responseTooLarge, { errcode: null, httpStatus, retryAfterMs: null }, false);
}

/** An event returned for a different room than the one asked for. */
export function roomMismatchError(): MatrixError {
  return new MatrixError(MATRIX_CODES.roomMismatch, { errcode: null, httpStatus: 200, retryAfterMs: null }, false);
}

/** A permanent authentication failure, keeping the HTTP facts of the original error when there is one. */
export function permanentAuthError(code: string, from?: MatrixError): MatrixError {
  const fields = from === undefined ? NO_RESPONSE : { errcode: from.errcode, httpStatus: from.httpStatus, retryAfterMs: null };
  return new MatrixError(code, fields, false);
}

/** Parses `Retry-After` (delta seconds or HTTP date) into milliseconds, or null. */
export function parseRetryAfterHeader(value: string | undefined, nowMs: number): number | null {
  if (value === undefined) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? null : Math.max(0, date - nowMs);
}

/** Parsed fields of a Matrix error body (`{errcode, error, retry_after_ms, soft_logout}`). */
export interface ErrorBody {
  readonly errcode: string | null;
  readonly retryAfterMs: number | null;
  readonly softLogout: boolean;
  /** `session` of a user-interactive-auth 401. */
  readonly uiaSession: string | null;
}

/** Facts of a non-2xx response needed to classify it. */
export interface HttpFailure {
  readonly status: number;
  readonly body: ErrorBody;
  readonly retryAfterHeader: string | undefined;
  readonly maxRetryAfterMs: number;
  readonly nowMs: number;
}

/** Maps a non-2xx response to a `MatrixError` with a stable code and retryability. */
export function errorFromResponse(failure: HttpFailure): MatrixError {
  const { status } = failure;
  const parsed = failure.body;
  const { errcode } = parsed;
  const base = { errcode, httpStatus: status, retryAfterMs: null };
  if (status === 429 || errcode === "M_LIMIT_EXCEEDED") {
    const hinted = parsed.retryAfterMs ?? parseRetryAfterHeader(failure.retryAfterHeader, failure.nowMs);
    const retryAfterMs = hinted === null ? null : Math.min(Math.round(hinted), failure.maxRetryAfterMs);
    return new MatrixError(MATRIX_CODES.rateLimited, { ...base, retryAfterMs }, true);
  }
  if (errcode === "M_UNKNOWN_TOKEN") {
    return new MatrixError(MATRIX_CODES.unknownToken, { ...base, softLogout: parsed.softLogout }, false);
  }
  if (errcode === "M_UNKNOWN_POS") return new MatrixError(MATRIX_CODES.unknownPos, base, false);
  if (status >= 500) return new MatrixError(MATRIX_CODES.serverError, base, true);
  if (status === 403) return new MatrixError(MATRIX_CODES.forbidden, base, false);
  if (status === 404) return new MatrixError(MATRIX_CODES.notFound, base, false);
  // A 401 asking for user-interactive auth keeps its session for the one repeat with `auth`.
  return new MatrixError(MATRIX_CODES.requestFailed, status === 401 ? { ...base, uiaSession: parsed.uiaSession } : base, false);
}
