// The stable failures of Lisa's HTTP client. Each user (Matrix, LLM, web,
// search, preflight) maps these codes to its own; the raw socket, TLS or
// parser error stays in `cause` (its `code`, e.g. ECONNREFUSED or
// DEPTH_ZERO_SELF_SIGNED_CERT, is what the users classify further).
import { LisaError } from "../errors.ts";

/** Every code an HTTP exchange can fail with. */
export type HttpFailureCode =
  | "http_connect_timeout"
  | "http_headers_timeout"
  | "http_body_timeout"
  | "http_aborted"
  | "http_body_too_large"
  | "http_unsupported_encoding"
  /** A request node:http cannot send as given (a scheme other than http/https, a header HTTP cannot carry). */
  | "http_invalid_request"
  /** A response this client never asked for and cannot use (a 101 switching protocols). */
  | "http_protocol_error"
  | "http_network";

/** Codes that a retry of the same request cannot change. */
const FINAL_CODES: ReadonlySet<HttpFailureCode> = new Set(["http_aborted", "http_body_too_large", "http_invalid_request", "http_protocol_error"]);

/** An expected failure of one HTTP exchange (never thrown to callers: returned as a value). */
export class HttpFailure extends LisaError {
  declare readonly code: HttpFailureCode;

  constructor(code: HttpFailureCode, cause?: unknown) {
    super(code, `HTTP exchange failed: ${code}`, { retryable: !FINAL_CODES.has(code), cause });
  }

  /** True for the three deadline codes. */
  get timedOut(): boolean {
    return this.code === "http_connect_timeout" || this.code === "http_headers_timeout" || this.code === "http_body_timeout";
  }

  /** The `code` of the underlying socket/TLS/parser error, if any (e.g. ECONNREFUSED). */
  get causeCode(): string | undefined {
    const code = (this.cause as { code?: unknown } | undefined)?.code;
    return typeof code === "string" ? code : undefined;
  }
}
