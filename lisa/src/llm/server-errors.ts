// Error bodies of self-hosted OpenAI-compatible servers that their HTTP status
// misrepresents. llama-cpp-python's server wraps every exception of a route,
// its own request validation included, as HTTP 500 with
// `{"error": {"type": "internal_server_error", "message": "<pydantic text>"}}`:
// an assistant message with `content: null`, an unsupported `response_format`
// or a missing field is then a refusal that no retry can fix, not an outage.

import { isRecord, tryParseJson } from "./text.ts";

// What pydantic/FastAPI print for a request that failed validation.
const VALIDATION_TEXT = /\b\d+ validation errors?\b|\bvalidation error for\b|\bField required\b|\bInput should be\b|\bExtra inputs are not permitted\b/;

/** The `error.message` and `error.type` of an OpenAI-style error body (either may be ""). */
export function errorFields(snippet: string): { message: string; type: string } {
  const body = tryParseJson(snippet);
  const error = isRecord(body) ? body["error"] : undefined;
  if (typeof error === "string") return { message: error, type: "" };
  if (!isRecord(error)) return { message: "", type: "" };
  const message = typeof error["message"] === "string" ? error["message"] : "";
  const type = typeof error["type"] === "string" ? error["type"] : "";
  return { message, type };
}

/** True for a 5xx body that is really a request-validation refusal (llama-cpp-python). */
export function isValidationFailure(status: number, snippet: string): boolean {
  if (status < 500) return false;
  const { message } = errorFields(snippet);
  return VALIDATION_TEXT.test(message);
}
