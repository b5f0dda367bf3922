// Valibot schemas of the chat-completions response fields Lisa relies on. Unknown
// fields (usage, timings, logprobs, reasoning_content, system_fingerprint ...)
// are ignored; what Lisa reads is validated strictly, but in the shapes
// self-hosted servers really send (see quirks.ts).

import * as v from "valibot";

/** Any JSON object: not an array (valibot's record would take one), not null. */
export const jsonObject = v.custom<Record<string, unknown>>(
  (value) => typeof value === "object" && value !== null && !Array.isArray(value),
);

// `arguments` arrives as a JSON string (OpenAI, vLLM, llama.cpp) or as an
// object (some Ollama versions and proxies); null or absent means "no arguments".
const toolArguments = v.optional(v.union([v.string(), jsonObject, v.null()]));

const functionCall = v.object({
  name: v.pipe(v.string(), v.minLength(1)),
  arguments: toolArguments,
});

const toolCall = v.object({
  // Missing, null or empty ids are synthesized later.
  id: v.nullish(v.string()),
  // Missing on some llama.cpp and Ollama builds; when present it must be a string.
  type: v.nullish(v.string()),
  function: functionCall,
});

// Content is a string, null (tool calls only), or an array of typed parts.
const contentPart = v.object({ type: v.string(), text: v.nullish(v.string()) });
const content = v.optional(v.union([v.string(), v.null(), v.array(contentPart)]));

const message = v.object({
  content,
  tool_calls: v.nullish(v.array(toolCall)),
  // The legacy single `function_call` some older servers still emit.
  function_call: v.nullish(functionCall),
});

const choice = v.object({
  message,
  finish_reason: v.nullish(v.string()),
});

/** The subset of a chat-completions response Lisa reads. */
export const completionSchema = v.object({
  choices: v.pipe(v.array(choice), v.minLength(1)),
});

/** Validates a chat-completions response; null when it is not the documented shape. */
export function parseCompletion(value: unknown): Completion | null {
  const parsed = v.safeParse(completionSchema, value);
  return parsed.success ? parsed.output : null;
}

/** A parsed chat-completions response. */
export type Completion = v.InferOutput<typeof completionSchema>;
/** One parsed response message. */
export type CompletionMessage = v.InferOutput<typeof message>;
/** One parsed tool call. */
export type CompletionToolCall = v.InferOutput<typeof toolCall>;
