// Turns a validated completion into an LlmTurn, tolerating what self-hosted
// servers really send: tool calls without `id`/`type`,
// object `arguments`, tool calls printed as JSON text in `content`
// (Hermes/Qwen `<tool_call>` tags, Mistral `[TOOL_CALLS]`, bare JSON), any
// `finish_reason` (the presence of tool calls decides), and hidden reasoning
// (`reasoning_content` is never read; `<think>` blocks are stripped).

import { randomBytes } from "node:crypto";
import type { Completion, CompletionMessage } from "./schemas.ts";
import { isRecord, stripThinking, tryParseJson, unfence } from "./text.ts";
import type { LlmToolCall, LlmTurn } from "./types.ts";

/** A tool call before ids are made unique and arguments become strings. */
export interface RawCall {
  readonly id: string | null | undefined;
  readonly name: string;
  readonly arguments: unknown;
}

const ID_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** A fresh tool-call id: 9 alphanumerics, the one shape every chat template accepts (Mistral's included). */
export function syntheticCallId(): string {
  const bytes = randomBytes(9);
  let id = "";
  for (const byte of bytes) id += ID_ALPHABET[byte % ID_ALPHABET.length];
  return id;
}

/** Arguments as the JSON string Lisa always sends back; absent arguments become `{}`. */
function argumentString(value: unknown): string {
  if (typeof value === "string") return value.trim() === "" ? "{}" : value;
  if (value === null || value === undefined) return "{}";
  return JSON.stringify(value);
}

/** Gives every call a non-empty id unique within the batch, and string arguments. */
function normaliseCalls(raw: readonly RawCall[]): LlmToolCall[] {
  const seen = new Set<string>();
  return raw.map((call) => {
    let id = typeof call.id === "string" ? call.id.trim() : "";
    if (id === "" || seen.has(id)) id = syntheticCallId();
    seen.add(id);
    return { id, name: call.name, arguments: argumentString(call.arguments) };
  });
}

/** The text of `content`, joining typed parts; null and absent become "". */
export function contentText(content: CompletionMessage["content"]): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part) => (part.type === "text" ? part.text ?? "" : "")).join("");
  return "";
}

/** A tool call written as a JSON value: `{name, arguments|parameters}` or `{type, function:{...}}`. */
function callFromJson(value: unknown): RawCall | null {
  if (!isRecord(value)) return null;
  const inner = isRecord(value["function"]) ? value["function"] : value;
  const name = inner["name"];
  if (typeof name !== "string" || name.trim() === "") return null;
  const allowed = new Set(["name", "arguments", "parameters", "id", "type", "function"]);
  if (Object.keys(value).some((key) => !allowed.has(key))) return null;
  const args = inner["arguments"] ?? inner["parameters"];
  if (args !== undefined && args !== null && typeof args !== "string" && !isRecord(args)) return null;
  const id = typeof value["id"] === "string" ? value["id"] : null;
  return { id, name: name.trim(), arguments: args };
}

/** Calls in one JSON text: an object or an array of call objects; null unless every element is a call. */
function callsFromJsonText(text: string): RawCall[] | null {
  const value = tryParseJson(unfence(text));
  const items = Array.isArray(value) ? value : [value];
  if (items.length === 0) return null;
  const calls = items.map(callFromJson);
  return calls.every((call): call is RawCall => call !== null) ? calls : null;
}

// A tagged call whose JSON is broken (often truncated): keep the name so the
// session answers with `invalid_arguments` and the model can try again.
function brokenTaggedCall(inner: string): RawCall[] | null {
  const name = /"name"\s*:\s*"([^"\\]{1,100})"/.exec(inner)?.[1];
  return name === undefined ? null : [{ id: null, name, arguments: inner.trim() }];
}

const TOOL_CALL_TAG = /<tool_call>([\s\S]*?)(?:<\/tool_call>|(?=<tool_call>)|$)/g;
const MISTRAL_PREFIX = "[TOOL_CALLS]";

/** Tool calls printed into `content`, with the text around them; null when there are none. */
export function extractTextToolCalls(text: string): { calls: RawCall[]; rest: string } | null {
  if (text.includes("<tool_call>")) {
    const calls: RawCall[] = [];
    for (const match of text.matchAll(TOOL_CALL_TAG)) {
      const inner = match[1] ?? "";
      const found = callsFromJsonText(inner) ?? brokenTaggedCall(inner);
      if (found === null) return null;
      calls.push(...found);
    }
    return calls.length === 0 ? null : { calls, rest: text.replace(TOOL_CALL_TAG, "").trim() };
  }
  const trimmed = text.trim();
  if (trimmed.startsWith(MISTRAL_PREFIX)) {
    const calls = callsFromJsonText(trimmed.slice(MISTRAL_PREFIX.length));
    return calls === null ? null : { calls, rest: "" };
  }
  const calls = callsFromJsonText(trimmed);
  return calls === null ? null : { calls, rest: "" };
}

/**
 * The turn a completion represents. `toolsOffered` gates reading tool calls
 * out of plain text, so a JSON final answer is never mistaken for a call.
 */
export function completionToTurn(completion: Completion, toolsOffered: boolean): LlmTurn {
  const choice = completion.choices[0];
  if (choice === undefined) throw new Error("completion without choices passed validation");
  const { message } = choice;
  const truncated = choice.finish_reason === "length";
  const text = stripThinking(contentText(message.content));
  const structured: RawCall[] = (message.tool_calls ?? []).map((call) => ({
    id: call.id, name: call.function.name.trim(), arguments: call.function.arguments,
  }));
  if (structured.length === 0 && message.function_call) {
    structured.push({ id: null, name: message.function_call.name.trim(), arguments: message.function_call.arguments });
  }
  if (structured.length > 0) {
    return { kind: "tool_calls", calls: normaliseCalls(structured), text: text === "" ? null : text, truncated };
  }
  if (toolsOffered) {
    const printed = extractTextToolCalls(text);
    if (printed !== null) {
      return { kind: "tool_calls", calls: normaliseCalls(printed.calls), text: printed.rest === "" ? null : printed.rest, truncated };
    }
  }
  return { kind: "text", text, truncated };
}
