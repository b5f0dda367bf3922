// Error values of the LLM side. The client reports precise codes (logged for
// operators); the orchestrator folds them into a small stable set for callers.

import { InvocationLimitError, LisaError, LlmProtocolError, LlmTransientError } from "../errors.ts";

/** The LLM service refused the request in a way repeating will not fix (4xx other than 429). */
export class LlmRejectedError extends LisaError {
  /** HTTP status of the refusal. */
  readonly httpStatus: number;

  constructor(code: string, httpStatus: number) {
    super(code, `LLM request rejected: ${code} (HTTP ${httpStatus})`, { retryable: false });
    this.httpStatus = httpStatus;
  }
}

/** An invocation stopped because its signal fired for a reason other than its deadline (shutdown). */
export class InvocationCancelledError extends LisaError {
  constructor() {
    super("invocation_cancelled", "The invocation was cancelled.", { retryable: true });
  }
}

/** Stable codes the answerer returns (see `toAnswerError`). */
export const ANSWER_ERROR_CODES = [
  "llm_unavailable", "llm_protocol_error", "llm_unauthorized", "invocation_limit", "invocation_timeout",
  "invocation_cancelled", "answer_invalid", "sources_invalid",
] as const;
/** One stable answerer error code. */
export type AnswerErrorCode = (typeof ANSWER_ERROR_CODES)[number];

/** The invocation deadline passed. */
export function timeoutError(): InvocationLimitError {
  return new InvocationLimitError("invocation_timeout", "The invocation deadline passed.");
}

/** The error to return when `signal` has fired: deadline, else cancellation. */
export function abortedError(signal: AbortSignal, deadline?: number): LisaError {
  const reason: unknown = signal.reason;
  const timedOut = reason instanceof Error && reason.name === "TimeoutError";
  if (timedOut || (deadline !== undefined && performance.now() >= deadline)) return timeoutError();
  return new InvocationCancelledError();
}

/** A transient failure (network, timeout, 429, 5xx) that retries did not overcome. */
export function unavailableError(lastCode: string, cause?: unknown): LlmTransientError {
  return new LlmTransientError("llm_unavailable", `LLM service unavailable (last: ${lastCode})`, { cause });
}

/** A response Lisa cannot use (bad JSON, wrong shape, oversized). */
export function protocolError(code = "llm_protocol_error", cause?: unknown): LlmProtocolError {
  return new LlmProtocolError(code, `LLM response unusable: ${code}`, { cause });
}

// Client codes that fold into one stable answerer code.
const FOLDED: Readonly<Record<string, AnswerErrorCode>> = {
  llm_unavailable: "llm_unavailable",
  llm_unauthorized: "llm_unauthorized",
  llm_protocol_error: "llm_protocol_error",
  llm_response_too_large: "llm_protocol_error",
  llm_not_found: "llm_protocol_error",
  llm_bad_request: "llm_protocol_error",
  llm_request_too_large: "invocation_limit",
  llm_context_exceeded: "invocation_limit",
  invocation_limit: "invocation_limit",
  invocation_timeout: "invocation_timeout",
  invocation_cancelled: "invocation_cancelled",
  answer_invalid: "answer_invalid",
  sources_invalid: "sources_invalid",
};

/** Maps any client or loop error to the answerer's stable error (the original stays as `cause`). */
export function toAnswerError(error: LisaError): LisaError {
  const code = FOLDED[error.code] ?? "llm_protocol_error";
  if (code === error.code) return error;
  if (code === "invocation_limit") return new InvocationLimitError(code, "An invocation limit was reached.", { cause: error });
  if (code === "llm_unavailable") return new LlmTransientError(code, "LLM service unavailable.", { cause: error });
  return new LlmProtocolError(code, `LLM request failed: ${code}`, { cause: error });
}

/** An answerer failure with one of the stable codes. */
export function answerError(code: "invocation_limit" | "answer_invalid" | "sources_invalid"): LisaError {
  if (code === "invocation_limit") return new InvocationLimitError(code, "An invocation limit was reached.");
  return new LlmProtocolError(code, `The model's final answer was unusable: ${code}`);
}
