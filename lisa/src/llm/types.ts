// Shapes shared by the chat-completions client, the prompt builder and the
// tool loop. Only these types cross from llm/ to its callers.

import type { LisaError, Result } from "../errors.ts";
import type { SourceEntry, ToolDefinition, ToolSession } from "../tools/port.ts";

/** One tool call as Lisa sends it back to the model: arguments always a JSON string. */
export interface LlmToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

/** One chat message of the OpenAI-compatible protocol, in the subset Lisa sends. */
export type ChatMessage =
  | { readonly role: "system"; readonly content: string }
  | { readonly role: "user"; readonly content: string }
  | {
    readonly role: "assistant";
    /** Always a string (`""` beside tool calls): some servers reject null. */
    readonly content: string;
    readonly tool_calls?: readonly {
      readonly id: string;
      readonly type: "function";
      readonly function: { readonly name: string; readonly arguments: string };
    }[];
  }
  | { readonly role: "tool"; readonly tool_call_id: string; readonly content: string };

/** What one completion produced: final text, or tool calls (with any text beside them). */
export type LlmTurn =
  | { readonly kind: "text"; readonly text: string; readonly truncated?: boolean }
  | {
    readonly kind: "tool_calls";
    readonly calls: LlmToolCall[];
    readonly text: string | null;
    readonly truncated?: boolean;
  };

/** One chat-completions request. */
export interface CompleteRequest {
  readonly messages: readonly ChatMessage[];
  /** Tools offered in this request; none means `tools` and `tool_choice` are omitted. */
  readonly tools: readonly ToolDefinition[];
  /** The invocation's signal (deadline and shutdown). */
  readonly signal: AbortSignal;
  /** Invocation deadline as a `performance.now()` value; retries never wait beyond it. */
  readonly deadline?: number;
  /** Hashed invocation id for log lines. */
  readonly correlationId?: string;
  /**
   * Streams the response when set: called with the whole content text so far
   * each time more arrived (a retried attempt starts again from its first
   * chunk). A server that cannot stream answers in one message and this is
   * never called.
   */
  readonly onContent?: (content: string) => void;
}

/** The narrow port the orchestrator uses to reach the model (the client, or a fake). */
export type CompletePort = (request: CompleteRequest) => Promise<Result<LlmTurn, LisaError>>;

/** A validated answer ready to render: Markdown plus host-verified sources. */
export interface FinalAnswer {
  readonly markdown: string;
  readonly sources: SourceEntry[];
  readonly llmIterations: number;
  readonly toolCalls: number;
}

/** What the answerer reports while it works (streaming replies). */
export type AnswerProgress =
  /** The final answer's Markdown as far as it has streamed (unvalidated: never to be shown as is). */
  | { readonly kind: "text"; readonly markdown: string }
  /** A tool call is about to run; `url` is the page it reads, when it reads one. */
  | { readonly kind: "tool"; readonly name: string; readonly url: string | null };

/** Everything one invocation hands to the answerer. */
export interface AnswerRequest {
  /** The `<room_context>` block, built and bounded by the context module. */
  readonly contextBlock: string;
  readonly tools: ToolSession;
  readonly signal: AbortSignal;
  readonly correlationId: string;
  /** Invocation deadline as a `performance.now()` value (optional; bounds LLM retries). */
  readonly deadline?: number;
  /** Streams the model's responses and reports progress when set. */
  readonly progress?: (progress: AnswerProgress) => void;
}

/** Produces the final answer of one invocation, running the tool loop. */
export type Answerer = (request: AnswerRequest) => Promise<Result<FinalAnswer, LisaError>>;
