// Maps how a download failed (the HTTP client's failure with its net, tls or
// dns cause, or an abort) to one stable web error code.
import { HttpFailure } from "../http/failure.ts";
import { WebError } from "./errors.ts";

const TIMEOUT_CODES = new Set(["ETIMEDOUT"]);
const TLS_VERIFY_CODES = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/** The signals whose state tells a deadline from a cancellation. */
export interface AbortSources {
  /** The fetcher's own total deadline. */
  readonly deadline: AbortSignal;
  /** The caller's signal. */
  readonly caller: AbortSignal;
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** The first WebError in an error's cause chain (the client wraps the guard's refusals). */
function findWebError(error: unknown): WebError | null {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    if (current instanceof WebError) return current;
    current = current.cause;
  }
  return null;
}

/** Classifies a download failure; aborts are a `timeout` unless the caller cancelled. */
export function classifyFailure(failure: unknown, sources: AbortSources): WebError {
  const known = findWebError(failure);
  if (known !== null) return known;
  // The socket, TLS or parser error itself is the cause kept (its code tells TLS refusals apart).
  const error = failure instanceof HttpFailure && failure.cause !== undefined ? failure.cause : failure;
  if (sources.deadline.aborted) return new WebError("timeout", { cause: error });
  if (sources.caller.aborted) {
    const reason: unknown = sources.caller.reason;
    const timedOut = reason instanceof Error && reason.name === "TimeoutError";
    return new WebError(timedOut ? "timeout" : "cancelled", { cause: error });
  }
  if (failure instanceof HttpFailure && failure.timedOut) return new WebError("timeout", { cause: failure });
  if (failure instanceof HttpFailure && failure.code === "http_body_too_large") return new WebError("download_too_large", { cause: failure });
  const code = codeOf(error);
  if (code !== undefined && TIMEOUT_CODES.has(code)) return new WebError("timeout", { cause: error });
  if (code !== undefined && TLS_VERIFY_CODES.has(code)) return new WebError("network_error", { retryable: false, cause: error });
  return new WebError("network_error", { cause: error });
}
