// One HTTP attempt against the chat-completions endpoint: bounded body read,
// per-request timeout layered on the invocation signal, and a classification
// of the outcome that the retry loop in client.ts acts on. Bodies are never
// logged or copied into errors.

import type { Dispatcher } from "undici";
import type { LisaError } from "../errors.ts";
import { InvocationLimitError } from "../errors.ts";
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
  readonly dispatcher: Dispatcher;
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

class BodyTooLarge extends Error {}

async function readBounded(body: AsyncIterable<Uint8Array> & { destroy(): unknown }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > limit) {
      body.destroy();
      throw new BodyTooLarge();
    }
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Reads at most `limit` bytes of an error body, then discards the rest. */
async function readErrorSnippet(body: AsyncIterable<Uint8Array> & { destroy(): unknown }): Promise<string> {
  try {
    return await readBounded(body, ERROR_BODY_BYTES);
  } catch {
    return "";
  }
}

function classifyStatus(status: number, snippet: string, retryAfterMs: number | null): AttemptOutcome {
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

/** Sends one request and classifies the outcome; never throws for expected failures. */
export async function attempt(input: AttemptInput): Promise<AttemptOutcome> {
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
    const response = await input.dispatcher.request({
      origin: input.url.origin,
      path: `${input.url.pathname}${input.url.search}`,
      method: "POST",
      headers: input.headers,
      body: input.body,
      signal: controller.signal,
    });
    const status = response.statusCode;
    if (status < 200 || status >= 300) {
      const snippet = await readErrorSnippet(response.body);
      return classifyStatus(status, snippet, parseRetryAfterMs(response.headers["retry-after"], Date.now()));
    }
    const text = await readBounded(response.body, input.maxResponseBytes);
    const json = tryParseJson(text);
    if (json === undefined) return { kind: "failed", status, error: protocolError("llm_protocol_error") };
    return { kind: "ok", status, json };
  } catch (error) {
    if (error instanceof BodyTooLarge) return { kind: "failed", status: 200, error: protocolError("llm_response_too_large") };
    if (input.signal.aborted) return { kind: "aborted" };
    return { kind: "transient", code: timedOut ? "llm_timeout" : "llm_network", status: null, retryAfterMs: null };
  } finally {
    clearTimeout(timer);
    input.signal.removeEventListener("abort", onAbort);
  }
}

/** `2xx`-style class of an HTTP status for logs ("none" when no response arrived). */
export function statusClass(status: number | null): string {
  return status === null ? "none" : `${Math.floor(status / 100)}xx`;
}
