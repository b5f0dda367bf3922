// Maps whatever a download threw (undici, net, tls, dns or an abort) to one
// stable web error code.
import { WebError } from "./errors.ts";

const TIMEOUT_CODES = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "ETIMEDOUT"]);
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

/** The first WebError in an error's cause chain (undici may wrap connector errors). */
function findWebError(error: unknown): WebError | null {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    if (current instanceof WebError) return current;
    current = current.cause;
  }
  return null;
}

/** Classifies a thrown download failure; aborts are a `timeout` unless the caller cancelled. */
export function classifyFailure(error: unknown, sources: AbortSources): WebError {
  const known = findWebError(error);
  if (known !== null) return known;
  if (sources.deadline.aborted) return new WebError("timeout", { cause: error });
  if (sources.caller.aborted) {
    const reason: unknown = sources.caller.reason;
    const timedOut = reason instanceof Error && reason.name === "TimeoutError";
    return new WebError(timedOut ? "timeout" : "cancelled", { cause: error });
  }
  const code = codeOf(error);
  if (code !== undefined && TIMEOUT_CODES.has(code)) return new WebError("timeout", { cause: error });
  if (code === "UND_ERR_RES_EXCEEDED_MAX_SIZE") return new WebError("download_too_large", { cause: error });
  if (code !== undefined && TLS_VERIFY_CODES.has(code)) return new WebError("network_error", { retryable: false, cause: error });
  return new WebError("network_error", { cause: error });
}
