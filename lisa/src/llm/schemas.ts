// zod schemas of the chat-completions response fields Lisa relies on. Unknown
// fields (usage, timings, logprobs, reasoning_content, system_fingerprint ...)
// are ignored; what Lisa reads is validated strictly, but in the shapes
// self-hosted servers really send (see quirks.ts).

import { z } from "zod";

// `arguments` arrives as a JSON string (OpenAI, vLLM, llama.cpp) or as an
// object (some Ollama versions and proxies); null or absent means "no arguments".
const toolArguments = z.union([z.string(), z.record(z.string(), z.unknown()), z.null()]).optional();

const functionCall = z.object({
  name: z.string().min(1),
  arguments: toolArguments,
});

const toolCall = z.object({
  // Missing, null or empty ids are synthesized later.
  id: z.string().nullish(),
  // Missing on some llama.cpp and Ollama builds; when present it must be a string.
  type: z.string().nullish(),
  function: functionCall,
});

// Content is a string, null (tool calls only), or an array of typed parts.
const contentPart = z.object({ type: z.string(), text: z.string().nullish() });
const content = z.union([z.string(), z.null(), z.array(contentPart)]).optional();

const message = z.object({
  content,
  tool_calls: z.array(toolCall).nullish(),
  // The legacy single `function_call` some older servers still emit.
  function_call: functionCall.nullish(),
});

const choice = z.object({
  message,
  finish_reason: z.string().nullish(),
});

/** The subset of a chat-completions response Lisa reads. */
export const completionSchema = z.object({
  choices: z.array(choice).min(1),
});

/** A parsed chat-completions response. */
export type Completion = z.infer<typeof completionSchema>;
/** One parsed response message. */
export type CompletionMessage = z.infer<typeof message>;
/** One parsed tool call. */
export type CompletionToolCall = z.infer<typeof toolCall>;
