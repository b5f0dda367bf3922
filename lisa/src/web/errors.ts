import { LisaError } from "../errors.ts";

/** Every stable code a web download can fail with. */
export const WEB_ERROR_CODES = [
  "invalid_url",
  "address_blocked",
  "redirect_limit",
  "http_error",
  "unsupported_encoding",
  "unsupported_content_type",
  "download_too_large",
  "timeout",
  "network_error",
  "cancelled",
] as const;

/** One stable web failure code. */
export type WebErrorCode = (typeof WEB_ERROR_CODES)[number];

// Fixed, non-sensitive texts: safe for the model and for logs (no URL, no host, no body).
const MESSAGES: Readonly<Record<WebErrorCode, string>> = {
  invalid_url: "The URL is not an acceptable absolute http or https URL.",
  address_blocked: "The destination address is not allowed by the web address policy.",
  redirect_limit: "The page redirected more often than the configured redirect limit allows.",
  http_error: "The server answered with a non-success HTTP status.",
  unsupported_encoding: "The server sent a compressed or otherwise encoded body, which is refused.",
  unsupported_content_type: "The page is not HTML or plain text.",
  download_too_large: "The page exceeded the configured download-size limit.",
  timeout: "The download did not finish within the configured time limits.",
  network_error: "The server could not be reached or the connection failed.",
  cancelled: "The download was cancelled.",
};

/** Options of one web failure. */
export interface WebErrorOptions {
  /** HTTP status of the response that caused the failure, when there was one. */
  readonly status?: number;
  /** Overrides the code's default retryability. */
  readonly retryable?: boolean;
  /** Internal cause (never shown to the model or room). */
  readonly cause?: unknown;
}

/** True for codes a later identical attempt may overcome. */
function defaultRetryable(code: WebErrorCode, status: number | null): boolean {
  if (code === "timeout" || code === "network_error") return true;
  if (code === "http_error" && status !== null) return status >= 500 || status === 429;
  return false;
}

/** An expected failure of the bounded web client; `message` is a fixed per-code text. */
export class WebError extends LisaError {
  declare readonly code: WebErrorCode;
  /** HTTP status of the refused response, or null when none was received. */
  readonly status: number | null;

  constructor(code: WebErrorCode, options: WebErrorOptions = {}) {
    const status = options.status ?? null;
    super(code, MESSAGES[code], { retryable: options.retryable ?? defaultRetryable(code, status), cause: options.cause });
    this.status = status;
  }
}

/** The fixed, non-sensitive description of a web failure code. */
export function webErrorMessage(code: WebErrorCode): string {
  return MESSAGES[code];
}
