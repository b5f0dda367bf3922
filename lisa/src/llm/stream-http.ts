// One streamed attempt (`stream: true`): the server-sent events are decoded
// as they arrive, folded into one completion, and the content so far is
// reported after every chunk that changed it. Bounds: the same byte cap as a
// whole response, the attempt's deadline, and an idle deadline between
// chunks (a stalled stream is `llm_timeout`, never a hang). A server that
// answers with one JSON body instead of events is read as today; one that
// refuses the `stream` field says so (`stream_refused`) and is asked again
// without it.

import type { ResponseBody } from "../http/body.ts";
import type { HttpClient } from "../http/client.ts";
import { protocolError } from "./errors.ts";
import { failed, readCompletion, responseTooLarge, sendAttempt, type AttemptInput, type AttemptOutcome } from "./http.ts";
import { SseDecoder } from "./sse.ts";
import { ChunkAccumulator } from "./stream-chunks.ts";
import { tryParseJson } from "./text.ts";

/** Inputs of a streamed attempt. */
export interface StreamAttemptInput extends AttemptInput {
  readonly client: HttpClient;
  /** Longest silence between two chunks of the body, in ms. */
  readonly idleMs: number;
  /** Called with the whole content text so far, each time a chunk added to it. */
  readonly onContent: (content: string) => void;
}

/**
 * A streamed attempt's outcome; `stream_refused` asks the caller to repeat the
 * request without streaming, `stream_interrupted` to repeat it without
 * streaming once (the stream ended with `[DONE]` before any finish reason:
 * llama-cpp-python's `interrupt_requests` cuts a stream so when another
 * request waits, and a second stream would be cut the same way).
 */
export type StreamOutcome = AttemptOutcome | { readonly kind: "stream_refused" } | { readonly kind: "stream_interrupted" };

// A refusal of the `stream` field itself (a proxy or server that cannot stream).
const STREAM_REFUSED = /\bstream(ing)?\b/i;

/** Sends one streamed request and classifies the outcome; never throws for expected failures. */
export function attemptStream(input: StreamAttemptInput): Promise<StreamOutcome> {
  return sendAttempt<StreamOutcome>(input, (response, timedOut) => {
    const type = String(response.headers["content-type"] ?? "").toLowerCase();
    // The server ignored `stream`: one ordinary completion.
    if (!type.includes("text/event-stream")) return readCompletion(input, response, timedOut);
    return readEvents(input, response.body, response.status, timedOut);
  }, (status, snippet) => ((status === 400 || status === 422) && STREAM_REFUSED.test(snippet) ? { kind: "stream_refused" } : null));
}

async function readEvents(input: StreamAttemptInput, body: ResponseBody, status: number, timedOut: () => boolean): Promise<StreamOutcome> {
  const sse = new SseDecoder(input.maxResponseBytes);
  const chunks = new ChunkAccumulator();
  const text = new TextDecoder("utf-8");
  const state: { done: boolean; problem: "invalid" | "error" | null } = { done: false, problem: null };
  const take = (payloads: readonly string[]): boolean => {
    const before = chunks.content;
    for (const data of payloads) {
      if (data.trim() === "[DONE]") {
        state.done = true;
        break;
      }
      const outcome = chunks.apply(tryParseJson(data));
      if (outcome !== "ok") {
        state.problem = outcome;
        return false;
      }
    }
    if (chunks.content !== before) input.onContent(chunks.content);
    return !state.done;
  };
  const read = await body.each(input.maxResponseBytes, (chunk) => {
    const step = sse.push(text.decode(chunk, { stream: true }));
    if (!step.ok) {
      state.problem = "invalid";
      return false;
    }
    return take(step.data);
  }, input.idleMs);
  if (!read.ok) {
    if (read.error.code === "http_body_too_large") return responseTooLarge();
    if (read.error.code === "http_body_timeout") return { kind: "transient", code: "llm_timeout", status, retryAfterMs: null };
    return failed(input.signal, timedOut());
  }
  if (state.problem === null && !state.done) {
    const tail = sse.push(text.decode());
    take([...(tail.ok ? tail.data : []), ...sse.end()]);
  }
  if (state.problem === "invalid") return { kind: "failed", status, error: protocolError("llm_protocol_error") };
  // llama-server reports a failure after the headers as an `error` event.
  if (state.problem === "error") return { kind: "transient", code: "llm_stream_error", status, retryAfterMs: null };
  // Cut off: neither [DONE] nor a finish reason arrived (a dying server, a proxy timeout).
  if (!state.done && !chunks.finished) return { kind: "transient", code: "llm_network", status, retryAfterMs: null };
  // [DONE] without a finish reason: the server gave up on this stream, the answer is not whole.
  if (!chunks.finished) return { kind: "stream_interrupted" };
  return { kind: "ok", status, json: chunks.completion() };
}
