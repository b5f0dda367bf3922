// The per-invocation tool loop and the final-answer contract (the model ends
// with one JSON answer whose sources the host verifies).
//
// Rules the host enforces:
// - Every LLM request counts as an iteration (repair and correction included).
// - The last permitted request offers no tools, so the model has to answer;
//   a tool request when no tools were offered stops with `invocation_limit`.
// - A batch that would exceed `max_tool_calls` is not run: each of its calls
//   is answered with an `invocation_limit` tool error (every call id gets its
//   tool message), tools are withdrawn, and the model gets one chance to
//   answer with what it has.
// - A tool result that would push the request past `max_request_characters`
//   is replaced by an `output_too_large` tool error.
// - One repair request for a malformed answer and one correction request for
//   unusable sources, each only while an iteration remains.
// The answerer never closes the ToolSession: whoever opened it does.

import type { LlmConfig, PersonaConfig } from "../config/types.ts";
import { err, ok, type LisaError, type Result } from "../errors.ts";
import type { Logger } from "../log/logger.ts";
import { createLlmClient } from "./client.ts";
import { abortedError, answerError, toAnswerError } from "./errors.ts";
import { checkFinalAnswer, type FinalAnswerCheck } from "./final-answer.ts";
import { initialMessages, repairRequest, sourceCorrectionRequest } from "./prompt.ts";
import { runToolBatch, type ToolBudget } from "./tool-batch.ts";
import { partialMarkdown } from "./partial-answer.ts";
import { isRecord, tryParseJson } from "./text.ts";
import type { AnswerProgress, AnswerRequest, Answerer, ChatMessage, CompletePort, FinalAnswer, LlmToolCall, LlmTurn } from "./types.ts";

/** Dependencies of the answerer. */
export interface AnswererDeps {
  readonly llm: LlmConfig;
  readonly persona: PersonaConfig;
  readonly log: Logger;
  /** The chat-completions port; by default a client with its own Agent (prefer passing one you close). */
  readonly complete?: CompletePort;
  /** Streaming: a prose answer (outside the JSON contract) is shown as it grows too (`streaming.prose`). */
  readonly streamProse?: boolean;
}

interface LoopState extends ToolBudget {
  iterations: number;
  repairUsed: boolean;
  correctionUsed: boolean;
}

/** Whether the model is offered tools at all: pointless when no later request could read their results. */
export function offersTools(llm: Pick<LlmConfig, "max_tool_calls" | "max_iterations">): boolean {
  return llm.max_tool_calls > 0 && llm.max_iterations > 1;
}

/** Creates the answerer that runs one invocation's model and tool loop. */
export function createAnswerer(deps: AnswererDeps): Answerer {
  const complete = deps.complete ?? createLlmClient({ llm: deps.llm, log: deps.log }).complete;
  return (request) => answer(deps, complete, request);
}

async function answer(deps: AnswererDeps, complete: CompletePort, request: AnswerRequest): Promise<Result<FinalAnswer, LisaError>> {
  const { llm } = deps;
  const log = deps.log.child({ invocation_id: request.correlationId });
  const definitions = offersTools(llm) ? request.tools.definitions() : [];
  const knownNames = new Set(definitions.map((tool) => tool.name));
  const messages: ChatMessage[] = initialMessages({
    persona: deps.persona.text,
    toolNames: definitions.map((tool) => tool.name),
    maxResponseCharacters: llm.max_response_characters,
    contextBlock: request.contextBlock,
  });
  const progress = request.progress;
  const state: LoopState = { iterations: 0, toolCalls: 0, toolsWithdrawn: definitions.length === 0, repairUsed: false, correctionUsed: false };
  const fail = (error: LisaError): Result<FinalAnswer, LisaError> => {
    const folded = toAnswerError(error);
    log.warn("answer_failed", { code: folded.code, cause_code: error.code, llm_iterations: state.iterations, tool_calls: state.toolCalls });
    return err(folded);
  };

  while (state.iterations < llm.max_iterations) {
    if (request.signal.aborted) return fail(abortedError(request.signal, request.deadline));
    state.iterations += 1;
    const lastIteration = state.iterations >= llm.max_iterations;
    const offered = state.toolsWithdrawn || lastIteration ? [] : definitions;
    const result = await complete({
      messages, tools: offered, signal: request.signal, deadline: request.deadline, correlationId: request.correlationId,
      // Prose streams, when configured, only while the final check would take it as the answer (no web result used).
      ...(progress === undefined ? {} : {
        onContent: (content: string) => reportText(content, progress, deps.streamProse === true && !request.tools.sources.materialResultsUsed()),
      }),
    });
    if (!result.ok) return fail(result.error);
    const turn: LlmTurn = result.value;
    if (turn.kind === "tool_calls") {
      if (offered.length === 0) return fail(answerError("invocation_limit"));
      const stopped = await runToolBatch({
        calls: turn.calls, text: turn.text, session: request.tools, knownNames,
        maxToolCalls: llm.max_tool_calls, maxRequestCharacters: llm.max_request_characters,
        signal: request.signal, deadline: request.deadline, log,
        ...(progress === undefined ? {} : { onCall: (call: LlmToolCall) => progress({ kind: "tool", name: call.name, url: pageUrl(call) }) }),
      }, state, messages);
      if (stopped !== null) return fail(stopped);
      continue;
    }
    const check = checkFinalAnswer(turn.text, {
      maxCharacters: llm.max_response_characters, sources: request.tools.sources, truncated: turn.truncated,
    });
    if (check.ok) {
      log.info("answer_ready", {
        llm_iterations: state.iterations, tool_calls: state.toolCalls, sources: check.sources.length, rejected_sources: check.rejectedUrls.length,
      });
      return ok({ markdown: check.markdown, sources: check.sources, llmIterations: state.iterations, toolCalls: state.toolCalls });
    }
    const followUp = followUpRequest(check, state, lastIteration, llm.max_response_characters);
    if (typeof followUp !== "string") return fail(followUp);
    log.info("answer_follow_up", { problem: check.problem, reason: check.problem === "malformed" ? check.reason : "sources" });
    messages.push({ role: "assistant", content: turn.text }, { role: "user", content: followUp });
  }
  return fail(answerError("invocation_limit"));
}

// Only the final answer's `markdown` (or a prose answer) is reported, as far as it streamed.
function reportText(content: string, progress: (progress: AnswerProgress) => void, prose: boolean): void {
  const markdown = partialMarkdown(content, prose);
  if (markdown !== null) progress({ kind: "text", markdown });
}

// The page a fetch tool call reads (for "reading example.org…"); null otherwise.
function pageUrl(call: LlmToolCall): string | null {
  const args = tryParseJson(call.arguments);
  const url = isRecord(args) ? args["url"] : undefined;
  return typeof url === "string" ? url : null;
}

/** The single repair or correction message for an unusable answer, or the error to stop with. */
function followUpRequest(
  check: Exclude<FinalAnswerCheck, { ok: true }>,
  state: LoopState,
  lastIteration: boolean,
  maxResponseCharacters: number,
): string | LisaError {
  if (check.problem === "malformed") {
    if (state.repairUsed || lastIteration) return answerError("answer_invalid");
    state.repairUsed = true;
    return repairRequest(check.reason, maxResponseCharacters);
  }
  if (state.correctionUsed || lastIteration) return answerError("sources_invalid");
  state.correctionUsed = true;
  return sourceCorrectionRequest(check.rejectedUrls, check.required);
}
