// Streamed chat-completions bodies for the scripted LLM, in the chunk shape
// llama-server sends (role chunk, content deltas, a finish chunk, `[DONE]`;
// see test/unit/llm/fixtures/llama-server-stream for real recordings):
// text split into "tokens" written at a steady rate, tool calls whose
// arguments arrive in fragments.
import type { ScriptedResponse, StreamPiece } from "./scripted-llm.ts";

/** Pacing of a scripted stream. */
export interface StreamPace {
  /** Characters per content delta (about one token: 4). */
  readonly pieceChars?: number;
  /** Delay before each delta (50 ms: 20 tokens a second). */
  readonly delayMs?: number;
  /** Line ending of the events (llama-cpp-python's sse-starlette writes CRLF). */
  readonly crlf?: boolean;
  /** Leave out the closing `[DONE]`. */
  readonly noDone?: boolean;
}

let counter = 0;

/** One `data:` event per chunk (objects serialised), optionally paced. */
export function sseEvents(chunks: readonly (unknown | string)[], pace: StreamPace = {}): StreamPiece[] {
  const nl = pace.crlf === true ? "\r\n" : "\n";
  const pieces = chunks.map((chunk) => ({ text: `data: ${typeof chunk === "string" ? chunk : JSON.stringify(chunk)}${nl}${nl}`, delayMs: pace.delayMs ?? 0 }));
  if (pace.noDone !== true) pieces.push({ text: `data: [DONE]${nl}${nl}`, delayMs: 0 });
  return pieces;
}

function chunk(delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> {
  return { id: `chatcmpl-stream-${counter}`, object: "chat.completion.chunk", created: 1_700_000_000, model: "test-model", choices: [{ index: 0, delta, finish_reason: finish }] };
}

/** Splits text into pieces of about `size` characters (code points kept whole). */
export function pieces(text: string, size: number): string[] {
  const chars = [...text];
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(""));
  return out;
}

/** A streamed plain content reply. */
export function streamedText(content: string, pace: StreamPace = {}, finish = "stop"): ScriptedResponse {
  counter += 1;
  const deltas = pieces(content, pace.pieceChars ?? 4).map((text) => chunk({ content: text }));
  return { stream: sseEvents([chunk({ role: "assistant", content: null }), ...deltas, chunk({}, finish)], pace) };
}

/** A streamed final answer in the JSON contract. */
export function streamedAnswer(markdown: string, sourceUrls: readonly string[] = [], pace: StreamPace = {}): ScriptedResponse {
  return streamedText(JSON.stringify({ markdown, source_urls: sourceUrls }), pace);
}

/** Streamed tool calls: id and name first, the arguments in fragments of `pieceChars`. */
export function streamedToolCalls(calls: readonly { readonly name: string; readonly arguments: unknown }[], pace: StreamPace = {}): ScriptedResponse {
  counter += 1;
  const chunks: unknown[] = [chunk({ role: "assistant", content: null })];
  calls.forEach((call, index) => {
    chunks.push(chunk({ tool_calls: [{ index, id: `call_${counter}_${index}`, type: "function", function: { name: call.name, arguments: "" } }] }));
    const args = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
    for (const part of pieces(args, pace.pieceChars ?? 4)) chunks.push(chunk({ tool_calls: [{ index, function: { arguments: part } }] }));
  });
  chunks.push(chunk({}, "tool_calls"));
  return { stream: sseEvents(chunks, pace) };
}
