import { type LisaError, ToolExecutionError, ToolInputError } from "../errors.ts";
import { WebError } from "../web/errors.ts";

// Fixed, non-sensitive messages the model sees for each failure code. Error
// messages from lower layers never reach the model: only their codes do.
const FAILURE_MESSAGES: Readonly<Record<string, string>> = {
  unknown_tool: "No tool with that name exists.",
  invalid_arguments: "The tool arguments were not a valid JSON object matching the tool's schema.",
  invalid_url: "The URL is not an acceptable absolute http or https URL.",
  address_blocked: "The URL points to a network address that Lisa is not allowed to contact.",
  redirect_limit: "The page redirected too many times or to an unacceptable URL.",
  download_too_large: "The page exceeded the configured download-size limit.",
  unsupported_content_type: "The content type is not supported (only HTML and plain text pages can be read).",
  unsupported_encoding: "The server used a content encoding that is not supported.",
  timeout: "The tool did not finish within its time limit.",
  http_error: "The web server answered with an error status.",
  network_error: "The web server could not be reached.",
  search_unavailable: "The search service is unavailable. Try again later or answer without searching.",
  search_rate_limited: "The search service is rate limiting requests. Wait before searching again.",
  artifact_not_found: "No downloaded page with that artifact_id exists in this conversation turn. Fetch the page first.",
  conversion_failed: "The HTML page could not be converted to Markdown.",
  conversion_busy: "Other pages are being converted right now; try again shortly or answer without this page.",
  output_too_large: "The result exceeded the configured size limit.",
  invocation_limit: "This conversation turn has used up its download and conversion budget.",
  cancelled: "The tool call was cancelled.",
  internal_error: "The tool failed unexpectedly.",
};

/** The fixed model-facing message for a failure code. */
export function failureMessage(code: string): string {
  return FAILURE_MESSAGES[code] ?? "The tool call failed.";
}

/** An expected tool failure with its fixed message. */
export function toolFailure(code: string, retryable = false): ToolExecutionError {
  return new ToolExecutionError(code, failureMessage(code), { retryable });
}

/** `unknown_tool`, naming the tools this configuration offers (web_search only when search is on). */
export function unknownTool(offered: readonly string[]): ToolExecutionError {
  return new ToolExecutionError("unknown_tool", `${failureMessage("unknown_tool")} Available tools: ${offered.join(", ")}.`);
}

/** An argument-validation failure with extra, host-written detail. */
export function invalidArguments(detail: string): ToolInputError {
  return new ToolInputError("invalid_arguments", `${failureMessage("invalid_arguments")} ${detail}`.trim());
}

/** Re-expresses a lower-layer error by its code, retryability and (for web errors) HTTP status only. */
export function fromLowerLayer(error: LisaError): ToolExecutionError {
  const status = error instanceof WebError ? error.status : null;
  if (status === null) return toolFailure(error.code, error.retryable);
  return new ToolExecutionError(error.code, `${failureMessage(error.code)} (HTTP status ${status})`, { retryable: error.retryable });
}
