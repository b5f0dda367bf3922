// `lisa check`, LLM: what a self-hosted server accepts silently but gets
// wrong, measured on llama.cpp's llama-server and llama-cpp-python:
// - both answer any model name with their one loaded model, so the configured
//   model is compared with `/v1/models`;
// - llama-server drops `tools` from the prompt when the model's chat template
//   cannot render them (its `/props` says so), so Lisa's tools would be
//   invisible to the model;
// - llama-cpp-python reports a refused request (an unsupported
//   response_format, a field it cannot parse) as HTTP 500;
// - a slow CPU model can need longer for `max_output_tokens` than
//   `request_timeout_seconds` allows (llama.cpp reports its speed).

import type { Agent } from "undici";
import { z } from "zod";
import type { AppConfig } from "../config/types.ts";
import { offersTools } from "../llm/orchestrator.ts";
import { errorFields, isValidationFailure } from "../llm/server-errors.ts";
import { httpProbe } from "./preflight-http.ts";
import { failed, printable, type PreflightResult, type ProbeContext } from "./preflight-result.ts";

const NAME = "llm";
const PROPS_MAX_BYTES = 2_000_000;
const LISTED_MODELS_SHOWN = 10;
// llama.cpp names its model by the GGUF file's full path.
const MODEL_ID_CHARS = 200;
// Headroom over the measured speed: CPU servers slow down under load.
const SPEED_HEADROOM = 1.5;

/** Ollama serves `name:latest` for a configured `name`. */
export function isListed(model: string, served: readonly string[]): boolean {
  return served.some((id) => id === model || id === `${model}:latest`);
}

function describeServed(served: readonly string[]): string {
  if (served.length === 0) return "none";
  const shown = served.slice(0, LISTED_MODELS_SHOWN).map((id) => printable(id, MODEL_ID_CHARS));
  const more = served.length - shown.length;
  return more > 0 ? `${shown.join(", ")} and ${more} more` : shown.join(", ");
}

/** The failure for a configured model the server does not serve. */
export function modelMissing(model: string, served: readonly string[] | null): PreflightResult {
  const list = served === null ? "" : `; served: ${describeServed(served)}`;
  return failed(NAME, "llm_model_missing", `model ${printable(model)} is not served by the LLM${list}: set llm.model to a served model or load it`);
}

/**
 * A configured model missing from a published list fails even when the
 * completion succeeded: llama.cpp and llama-cpp-python answer any name with
 * whatever model they loaded, so success proves nothing about the name.
 */
export function unlistedModel(model: string, served: readonly string[] | null): PreflightResult | null {
  if (served === null || isListed(model, served)) return null;
  return failed(NAME, "llm_model_missing",
    `model ${printable(model, MODEL_ID_CHARS)} is not listed by /models (served: ${describeServed(served)}); the server answered with another model ` +
    "(llama.cpp and llama-cpp-python accept any name): set llm.model to the served id");
}

const FORMAT_FIELD = /response[_ ]?format|json[_ ]?schema|json[_ ]?object/i;

/** Explains a 5xx that is really a request-validation refusal (llama-cpp-python); null for a real server error. */
export function validationRefusal(config: AppConfig, status: number, body: string): PreflightResult | null {
  if (!isValidationFailure(status, body)) return null;
  const { message } = errorFields(body);
  if (config.llm.response_format !== "none" && FORMAT_FIELD.test(message)) {
    return failed(NAME, "llm_response_format_unsupported",
      `the LLM server refused response_format ${config.llm.response_format} (HTTP ${status}, a validation error): ` +
      'set llm.response_format to a mode it supports ("none" always works)');
  }
  return failed(NAME, "llm_request_rejected",
    `the LLM server refused Lisa's request as invalid (HTTP ${status}, a validation error): ` +
    "check that it is an OpenAI-compatible server version that supports tool calling and the configured llm.response_format");
}

const propsSchema = z.object({
  chat_template: z.string().optional(),
  chat_template_caps: z.record(z.string(), z.unknown()).optional(),
});

/** `{origin}/props` for a base URL ending in `/v1` (llama-server serves it beside, not under, /v1). */
export function propsUrl(baseUrl: string): URL {
  const url = new URL(baseUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, "").replace(/\/v1$/, "")}/props`;
  url.search = "";
  return url;
}

/** Whether a llama-server `/props` body shows a chat template that renders tools; null when it says nothing. */
export function templateSeesTools(propsBody: string): boolean | null {
  let parsed: z.infer<typeof propsSchema>;
  try {
    const result = propsSchema.safeParse(JSON.parse(propsBody));
    if (!result.success) return null;
    parsed = result.data;
  } catch {
    return null;
  }
  const caps = parsed.chat_template_caps;
  if (caps !== undefined && typeof caps["supports_tools"] === "boolean") return caps["supports_tools"];
  if (parsed.chat_template !== undefined && parsed.chat_template !== "") return /\btools\b/.test(parsed.chat_template);
  return null;
}

/**
 * llama-server only: fails when the loaded chat template cannot show tools to
 * the model (llama-server then drops them from the prompt without an error).
 * Null when tools are off, or the server has no llama.cpp `/props`.
 */
export async function probeToolTemplate(
  agent: Agent, config: AppConfig, headers: Readonly<Record<string, string>>, context: ProbeContext,
): Promise<PreflightResult | null> {
  if (!offersTools(config.llm)) return null;
  const props = await httpProbe(agent, { method: "GET", url: propsUrl(config.llm.base_url), headers, maxBodyBytes: PROPS_MAX_BYTES }, context);
  if (props.kind !== "response" || props.status !== 200 || props.truncated) return null;
  if (templateSeesTools(props.body) !== false) return null;
  return failed(NAME, "llm_tools_invisible",
    "the model's chat template cannot show tools to the model, so llama-server silently drops Lisa's tools (its /props says so): " +
    "start llama-server with --jinja --chat-template-file <a tool-capable template for this model> " +
    "(for ChatML models such as SmolLM2: deploy/llama/chatml-tools.jinja from Lisa's package), use a model whose template supports tools, " +
    "or set llm.max_tool_calls = 0 to run without tools");
}

const timingsSchema = z.object({ timings: z.object({ predicted_per_second: z.number().positive() }) });

/**
 * Fails when the generation speed the server reported for the probe
 * (llama.cpp's `timings`) makes an answer of `max_output_tokens` take longer
 * than `request_timeout_seconds`, with headroom for load. Null otherwise.
 */
export function speedProblem(config: AppConfig, completionBody: string): PreflightResult | null {
  let speed: number;
  try {
    const parsed = timingsSchema.safeParse(JSON.parse(completionBody));
    if (!parsed.success) return null;
    speed = parsed.data.timings.predicted_per_second;
  } catch {
    return null;
  }
  const { max_output_tokens: tokens, request_timeout_seconds: timeout } = config.llm;
  const needed = Math.ceil((tokens / speed) * SPEED_HEADROOM);
  if (needed <= timeout) return null;
  return failed(NAME, "llm_too_slow",
    `the model generates about ${Math.round(speed * 10) / 10} tokens/s, so an answer of llm.max_output_tokens = ${tokens} ` +
    `may need ${needed} s with headroom for load, beyond llm.request_timeout_seconds = ${timeout}: ` +
    `raise llm.request_timeout_seconds to at least ${needed} (and runtime.invocation_timeout_seconds above it) or lower llm.max_output_tokens`);
}
