// One HTTP attempt against the chat-completions endpoint: bounded body read,
// per-request timeout layered on the invocation signal, and a classification
// of the outcome that the retry loop in client.ts acts on. Bodies are never
// logged or copied into errors.

import type { LisaError } from "../errors.ts";
import { InvocationLimitError } from "../errors.ts";
import type { ResponseBody } from "../http/body.ts";
import type { HttpClient, HttpResponse } from "../http/client.ts";
import { LlmRejectedError, protocolError } from "./errors.ts";
import { parseRetryAfterMs } from "./retry.ts";
import { isValidationFailure } from "./server-errors.ts";
import { tryParseJson } from "./text.ts";

/** What one attempt produced. */
export type AttemptOutcome =
  | { readonly kind: "ok"; readonly status: number; readonly json: unknown }
  | { readonly kind: "transient"; readonly code: string; readonly status: number | null; readonly retryAfterMs: number | null }
  | { readonly kind: "failed"; readonly status: number | null; readonly error: LisaError }
  | { readonly kind: "aborted" };

/** Inputs of one attempt. */
export interface AttemptInput {
  readonly client: HttpClient;
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  /** The invocation's signal: when it fires the attempt is `aborted`, not transient. */
  readonly signal: AbortSignal;
}

// Enough of an error body to recognise a context-length refusal.
const ERROR_BODY_BYTES = 16 * 1024;
const CONTEXT_EXCEEDED = /context[ _-]?(length|size|window)|maximum context|too many tokens|prompt is too long|exceeds? the (available )?context/i;

/** Reads at most ERROR_BODY_BYTES of an error body ("" when longer or broken), then discards the rest. */
export async function readErrorSnippet(body: ResponseBody): Promise<string> {
  const text = await body.text(ERROR_BODY_BYTES);
  return text.ok ? text.value : "";
}

/** The outcome of a non-2xx status (the error body's first bytes decide a few). */
export function classifyStatus(status: number, snippet: string, retryAfterMs: number | null): AttemptOutcome {
  if (status === 429) return { kind: "transient", code: "llm_rate_limited", status, retryAfterMs };
  if (status === 408) return { kind: "transient", code: "llm_request_timeout", status, retryAfterMs };
  // llama-cpp-python reports its own request validation as 500: a refusal, not an outage.
  if (isValidationFailure(status, snippet)) return { kind: "failed", status, error: new LlmRejectedError("llm_bad_request", status) };
  if (status >= 500) return { kind: "transient", code: "llm_server_error", status, retryAfterMs };
  if (status === 401 || status === 403) return { kind: "failed", status, error: new LlmRejectedError("llm_unauthorized", status) };
  if (status === 404) return { kind: "failed", status, error: new LlmRejectedError("llm_not_found", status) };
  if (status === 413 || ((status === 400 || status === 422) && CONTEXT_EXCEEDED.test(snippet))) {
    return {
      kind: "failed", status,
      error: new InvocationLimitError("llm_context_exceeded", "The request exceeded the model's context.", { cause: new LlmRejectedError("llm_context_exceeded", status) }),
    };
  }
  if (status >= 400) return { kind: "failed", status, error: new LlmRejectedError("llm_bad_request", status) };
  return { kind: "failed", status, error: protocolError("llm_protocol_error") };
}

/**
 * Sends one request under the attempt's deadline and the invocation's signal
 * and hands a 2xx response to `read` while both still apply; a network
 * failure, the deadline, the abort and a non-2xx status are classified here.
 * `refused` may turn a non-2xx answer into an outcome of the caller's own.
 */
export async function sendAttempt<T>(
  input: AttemptInput,
  read: (response: HttpResponse, timedOut: () => boolean) => Promise<AttemptOutcome | T>,
  refused: (status: number, snippet: string) => T | null = () => null,
): Promise<AttemptOutcome | T> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, input.timeoutMs);
  const onAbort = (): void => controller.abort();
  input.signal.addEventListener("abort", onAbort, { once: true });
  try {
    if (input.signal.aborted) return { kind: "aborted" };
    const sent = await input.client.request({ url: input.url, method: "POST", headers: input.headers, body: input.body, signal: controller.signal });
    if (!sent.ok) return failed(input.signal, timedOut);
    const response = sent.value;
    const status = response.status;
    if (status < 200 || status >= 300) {
      const snippet = await readErrorSnippet(response.body);
      return refused(status, snippet) ?? classifyStatus(status, snippet, parseRetryAfterMs(response.headers["retry-after"], Date.now()));
    }
    return await read(response, () => timedOut);
  } finally {
    clearTimeout(timer);
    input.signal.removeEventListener("abort", onAbort);
  }
}

/** A whole JSON completion as the body of a 2xx response, within the response cap. */
export async function readCompletion(input: AttemptInput, response: HttpResponse, timedOut: () => boolean): Promise<AttemptOutcome> {
  const text = await response.body.text(input.maxResponseBytes);
  if (!text.ok) return text.error.code === "http_body_too_large" ? responseTooLarge() : failed(input.signal, timedOut());
  const json = tryParseJson(text.value);
  if (json === undefined) return { kind: "failed", status: response.status, error: protocolError("llm_protocol_error") };
  return { kind: "ok", status: response.status, json };
}

/** Sends one request and classifies the outcome; never throws for expected failures. */
export function attempt(input: AttemptInput): Promise<AttemptOutcome> {
  return sendAttempt(input, (response, timedOut) => readCompletion(input, response, timedOut));
}

/** A response past `maxResponseBytes`. */
export function responseTooLarge(): AttemptOutcome {
  return { kind: "failed", status: 200, error: protocolError("llm_response_too_large") };
}

/** No usable response: the invocation's abort, the attempt's timeout, or a network failure. */
export function failed(signal: AbortSignal, attemptTimedOut: boolean): AttemptOutcome {
  if (signal.aborted) return { kind: "aborted" };
  return { kind: "transient", code: attemptTimedOut ? "llm_timeout" : "llm_network", status: null, retryAfterMs: null };
}

/** `2xx`-style class of an HTTP status for logs ("none" when no response arrived). */
export function statusClass(status: number | null): string {
  return status === null ? "none" : `${Math.floor(status / 100)}xx`;
}
