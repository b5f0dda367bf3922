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
  | "http_network";

/** An expected failure of one HTTP exchange (never thrown to callers: returned as a value). */
export class HttpFailure extends LisaError {
  declare readonly code: HttpFailureCode;

  constructor(code: HttpFailureCode, cause?: unknown) {
    super(code, `HTTP exchange failed: ${code}`, { retryable: code !== "http_aborted" && code !== "http_body_too_large", cause });
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
