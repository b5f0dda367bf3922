// Runs one batch of model tool calls: the batch is
// rejected as a whole when it would exceed `max_tool_calls`; otherwise each
// call runs sequentially in model order through the session, invalid and
// failed calls included in the count, and every call id gets its `tool`
// message so the conversation stays well-formed.

import { errorCode, type LisaError } from "../errors.ts";
import type { Logger } from "../log/logger.ts";
import type { ToolResult, ToolSession } from "../tools/port.ts";
import { abortedError } from "./errors.ts";
import { assistantToolCallMessage, hostToolError, toolMessage, toolResultContent } from "./tool-messages.ts";
import type { ChatMessage, LlmToolCall } from "./types.ts";

/** Loop state the batch reads and updates. */
export interface ToolBudget {
  /** Calls executed so far in this invocation (invalid and failed ones included). */
  toolCalls: number;
  /** Set once a batch was rejected: no tools are offered afterwards. */
  toolsWithdrawn: boolean;
}

/** Everything one batch needs. */
export interface ToolBatchInput {
  readonly calls: readonly LlmToolCall[];
  readonly text: string | null;
  readonly session: ToolSession;
  readonly knownNames: ReadonlySet<string>;
  readonly maxToolCalls: number;
  /** Character budget of the serialized messages (`llm.max_request_characters`). */
  readonly maxRequestCharacters: number;
  readonly signal: AbortSignal;
  readonly deadline: number | undefined;
  readonly log: Logger;
  /** Told about each call just before it runs (streaming replies show what she is doing). */
  readonly onCall?: (call: LlmToolCall) => void;
}

// Room kept free in the request for the host's own later messages (repair, correction).
const HOST_MESSAGE_RESERVE = 2_000;

async function executeOne(input: ToolBatchInput, call: LlmToolCall): Promise<ToolResult | null> {
  try {
    return await input.session.execute(call.name, call.arguments, input.signal);
  } catch (error) {
    if (input.signal.aborted) return null;
    // A throwing tool is a bug in the tool; the model only learns that it failed.
    input.log.error("tool_execute_threw", { code: errorCode(error) });
    return { ok: false, code: "tool_failed", content: "The tool failed unexpectedly.", metadata: {} };
  }
}

/** Appends the assistant call message and one `tool` message per call; fails only when the signal fires. */
export async function runToolBatch(
  input: ToolBatchInput,
  budget: ToolBudget,
  messages: ChatMessage[],
): Promise<LisaError | null> {
  messages.push(assistantToolCallMessage(input.text, input.calls));
  if (budget.toolCalls + input.calls.length > input.maxToolCalls) {
    for (const call of input.calls) messages.push(toolMessage(call.id, hostToolError("invocation_limit")));
    budget.toolsWithdrawn = true;
    input.log.warn("tool_batch_rejected", { requested: input.calls.length, used: budget.toolCalls, limit: input.maxToolCalls });
    return null;
  }
  let used = JSON.stringify(messages).length;
  for (const call of input.calls) {
    if (input.signal.aborted) return abortedError(input.signal, input.deadline);
    budget.toolCalls += 1;
    input.onCall?.(call);
    const started = performance.now();
    const result = await executeOne(input, call);
    if (result === null || input.signal.aborted) return abortedError(input.signal, input.deadline);
    let content = toolResultContent(result);
    // Both forms are measured as they will be serialized (JSON escapes included).
    if (used + JSON.stringify(content).length + HOST_MESSAGE_RESERVE > input.maxRequestCharacters) {
      content = hostToolError("output_too_large");
    }
    const message = toolMessage(call.id, content);
    messages.push(message);
    used += JSON.stringify(message).length + 1;
    input.log.info("tool_call_done", {
      tool: input.knownNames.has(call.name) ? call.name : "unknown",
      ok: result.ok,
      code: /^[a-z][a-z0-9_]{0,63}$/.test(result.code) ? result.code : "invalid_code",
      duration_ms: Math.round(performance.now() - started),
    });
  }
  return null;
}
