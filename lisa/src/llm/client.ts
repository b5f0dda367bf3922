// The OpenAI-compatible chat-completions client: one POST per request, never
// retried blindly, tolerant of what self-hosted servers send. It owns its own HttpClient (keep-alive sockets), so no headers, cookies or credentials
// are shared with the Matrix, search or web clients. It logs codes, status
// classes, durations and retry delays only: never bodies, prompts or the key.

import type { LlmConfig } from "../config/types.ts";
import { err, InvocationLimitError, ok, type LisaError, type Result } from "../errors.ts";
import { HttpClient } from "../http/client.ts";
import type { Logger } from "../log/logger.ts";
import type { ToolDefinition } from "../tools/port.ts";
import { abortedError, protocolError, timeoutError, unavailableError } from "./errors.ts";
import { attempt, statusClass, type AttemptOutcome } from "./http.ts";
import { attemptStream } from "./stream-http.ts";
import { completionToTurn } from "./quirks.ts";
import { backoffDelayMs, retryPolicy, sleep, type RetryPolicy } from "./retry.ts";
import { parseCompletion } from "./schemas.ts";
import type { ChatMessage, CompletePort, CompleteRequest, LlmTurn } from "./types.ts";

/** Name of the JSON schema sent when `response_format = "json_schema"`. */
export const ANSWER_SCHEMA_NAME = "lisa_answer";

/** The final-answer JSON schema: Markdown plus source URLs, nothing else. */
export const ANSWER_JSON_SCHEMA = {
  type: "object",
  properties: {
    markdown: { type: "string" },
    source_urls: { type: "array", items: { type: "string" } },
  },
  required: ["markdown", "source_urls"],
  additionalProperties: false,
} as const;

/** Options of `createLlmClient`. */
export interface LlmClientOptions {
  readonly llm: LlmConfig;
  readonly log: Logger;
  /** Overrides of the retry policy (tests use short delays). */
  readonly retry?: Partial<RetryPolicy>;
  /** Source of jitter in [0, 1); `Math.random` by default. */
  readonly random?: () => number;
  /** Longest silence between two chunks of a streamed response, in ms (default 90 s, at most the request timeout). */
  readonly streamIdleMs?: number;
}

/** The chat-completions client: the `complete` port plus the owned connection pool. */
export interface LlmClient {
  readonly complete: CompletePort;
  /** Closes the client's own sockets. */
  close(): Promise<void>;
}

// Raw response bytes allowed per output token (JSON escapes, reasoning text),
// plus room for the envelope; capped by a hard ceiling.
const BYTES_PER_TOKEN = 64;
const ENVELOPE_BYTES = 256 * 1024;
const RESPONSE_BYTES_CEILING = 16 * 1024 * 1024;

/** The `response_format` field for the configured mode (undefined for `none`). */
export function responseFormat(mode: LlmConfig["response_format"]): Record<string, unknown> | undefined {
  if (mode === "json_object") return { type: "json_object" };
  if (mode === "json_schema") {
    return { type: "json_schema", json_schema: { name: ANSWER_SCHEMA_NAME, strict: true, schema: ANSWER_JSON_SCHEMA } };
  }
  return undefined;
}

/** The JSON request body (messages are sent exactly as given). */
export function requestBody(llm: LlmConfig, messages: readonly ChatMessage[], tools: readonly ToolDefinition[]): Record<string, unknown> {
  const body: Record<string, unknown> = { model: llm.model, messages };
  if (tools.length > 0) {
    body["tools"] = tools.map((tool) => ({
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
    body["tool_choice"] = "auto";
  }
  body["max_tokens"] = llm.max_output_tokens;
  body["temperature"] = llm.temperature;
  const format = responseFormat(llm.response_format);
  if (format !== undefined) body["response_format"] = format;
  return body;
}

function requestHeaders(llm: LlmConfig): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(llm.extra_headers)) headers[name.toLowerCase()] = value.reveal();
  headers["content-type"] = "application/json";
  headers["accept"] = "application/json";
  if (llm.api_key !== null) headers["authorization"] = `Bearer ${llm.api_key.reveal()}`;
  return headers;
}

/** `{base_url}/chat/completions`, tolerating a trailing slash on the base. */
export function completionsUrl(baseUrl: string): URL {
  const url = new URL(baseUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/chat/completions`;
  return url;
}

/** Creates the client with its own HttpClient. */
export function createLlmClient(options: LlmClientOptions): LlmClient {
  const { llm, log } = options;
  const requestTimeoutMs = llm.request_timeout_seconds * 1000;
  const http = new HttpClient({
    connectTimeout: Math.min(requestTimeoutMs, 30_000),
    headersTimeout: requestTimeoutMs,
    bodyTimeout: requestTimeoutMs,
    keepAliveTimeout: 10_000,
    decompress: true,
  });
  const policy = retryPolicy(options.retry);
  const random = options.random ?? Math.random;
  const url = completionsUrl(llm.base_url);
  const maxResponseBytes = Math.min(RESPONSE_BYTES_CEILING, ENVELOPE_BYTES + llm.max_output_tokens * BYTES_PER_TOKEN);
  const streamIdleMs = Math.max(1, Math.min(options.streamIdleMs ?? 90_000, requestTimeoutMs));
  // Set once the server refused `stream`: later requests go out as single messages.
  let streamRefused = false;

  const complete: CompletePort = async (request: CompleteRequest): Promise<Result<LlmTurn, LisaError>> => {
    const messagesSize = JSON.stringify(request.messages).length;
    const rlog = request.correlationId === undefined ? log : log.child({ invocation_id: request.correlationId });
    if (messagesSize > llm.max_request_characters) {
      rlog.warn("llm_request_too_large", { request_characters: messagesSize, limit: llm.max_request_characters });
      return err(new InvocationLimitError("llm_request_too_large", "The LLM request exceeded max_request_characters."));
    }
    const onContent = request.onContent;
    let streaming = onContent !== undefined && !streamRefused;
    const bodyFor = (stream: boolean): string => JSON.stringify({ ...requestBody(llm, request.messages, request.tools), ...(stream ? { stream: true } : {}) });
    let body = bodyFor(streaming);
    const headers = requestHeaders(llm);
    if (streaming) headers["accept"] = "text/event-stream, application/json";
    let lastCode = "llm_unavailable";
    for (let attemptNo = 1; attemptNo <= policy.maxAttempts; attemptNo += 1) {
      const remaining = request.deadline === undefined ? Infinity : request.deadline - performance.now();
      if (request.signal.aborted || remaining <= 0) return err(abortedError(request.signal, request.deadline));
      const started = performance.now();
      const input = { client: http, url, headers, body, maxResponseBytes, signal: request.signal, timeoutMs: Math.max(1, Math.min(requestTimeoutMs, remaining)) };
      const streamed = streaming && onContent !== undefined ? await attemptStream({ ...input, idleMs: streamIdleMs, onContent }) : await attempt(input);
      if (streamed.kind === "stream_refused" || streamed.kind === "stream_interrupted") {
        // A server that cannot stream: today's single message, for this request and every later one.
        // A stream the server cut (llama-cpp-python's interrupt_requests): this request once more, as one message.
        rlog.warn(streamed.kind === "stream_refused" ? "llm_stream_refused" : "llm_stream_interrupted", { attempt: attemptNo });
        if (streamed.kind === "stream_refused") streamRefused = true;
        streaming = false;
        body = bodyFor(false);
        headers["accept"] = "application/json";
        attemptNo -= 1;
        continue;
      }
      const outcome: AttemptOutcome = streamed;
      const durationMs = Math.round(performance.now() - started);
      if (outcome.kind === "aborted") return err(abortedError(request.signal, request.deadline));
      if (outcome.kind === "ok") {
        const parsed = parseCompletion(outcome.json);
        if (parsed === null) {
          rlog.warn("llm_request_failed", { code: "llm_protocol_error", status_class: statusClass(outcome.status), attempt: attemptNo, duration_ms: durationMs });
          return err(protocolError("llm_protocol_error"));
        }
        const turn = completionToTurn(parsed, request.tools.length > 0);
        rlog.debug("llm_request_done", {
          status_class: statusClass(outcome.status), attempt: attemptNo, duration_ms: durationMs,
          turn: turn.kind, tool_calls: turn.kind === "tool_calls" ? turn.calls.length : 0, truncated: turn.truncated === true, streamed: streaming,
        });
        return ok(turn);
      }
      if (outcome.kind === "failed") {
        rlog.warn("llm_request_failed", { code: outcome.error.code, status_class: statusClass(outcome.status), attempt: attemptNo, duration_ms: durationMs });
        return err(outcome.error);
      }
      lastCode = outcome.code;
      // A timeout caused by the clamped deadline is the invocation's timeout, not the server's.
      const deadlineHit = outcome.code === "llm_timeout" && remaining < requestTimeoutMs;
      if (deadlineHit || (request.deadline !== undefined && performance.now() >= request.deadline)) {
        rlog.warn("llm_request_failed", { code: "invocation_timeout", status_class: statusClass(outcome.status), attempt: attemptNo, duration_ms: durationMs });
        return err(timeoutError());
      }
      const delayMs = outcome.retryAfterMs ?? backoffDelayMs(policy, attemptNo, random);
      const fields = { code: outcome.code, status_class: statusClass(outcome.status), attempt: attemptNo, duration_ms: durationMs, delay_ms: delayMs };
      const afterWait = request.deadline === undefined ? Infinity : request.deadline - performance.now() - delayMs;
      const tooLong = outcome.retryAfterMs !== null && outcome.retryAfterMs > policy.maxRetryAfterMs;
      if (attemptNo >= policy.maxAttempts || afterWait <= 0 || tooLong) {
        rlog.warn("llm_retry_abandoned", fields);
        break;
      }
      rlog.warn("llm_retry", fields);
      if (!(await sleep(delayMs, request.signal))) return err(abortedError(request.signal, request.deadline));
    }
    return err(unavailableError(lastCode));
  };

  return { complete, close: () => http.close() };
}
