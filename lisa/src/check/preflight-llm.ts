// `lisa check`, LLM: `GET {base}/models` (reachable, authorised, is the model
// served?) and one tiny chat completion carrying a trivial tool definition
// and the configured response_format, to prove the server accepts what Lisa
// will send. Response bodies are classified, never printed: only bounded,
// sanitised model ids from the list appear in the output.

import type { Agent } from "undici";
import { z } from "zod";
import type { AppConfig } from "../config/types.ts";
import { completionsUrl, responseFormat } from "../llm/client.ts";
import { completionSchema } from "../llm/schemas.ts";
import { httpProbe, joinUrl, probeAgent, type HttpOutcome } from "./preflight-http.ts";
import { isListed, modelMissing, probeToolTemplate, speedProblem, unlistedModel, validationRefusal } from "./preflight-llm-server.ts";
import { displayUrl, failed, passed, printable, timedOutResult, type PreflightResult, type ProbeContext } from "./preflight-result.ts";

const NAME = "llm";
const MODELS_MAX_BYTES = 1_000_000;
const COMPLETION_MAX_BYTES = 256 * 1024;
const PROBE_MAX_TOKENS = 16;

/** The trivial tool sent with the probe completion; the model is never asked to call it. */
export const PROBE_TOOL = {
  type: "function",
  function: {
    name: "lisa_check",
    description: "Connectivity check of the Lisa bot. Never needs to be called.",
    parameters: { type: "object", properties: {}, additionalProperties: false },
  },
} as const;

const modelListSchema = z.object({ data: z.array(z.object({ id: z.string() })) });

const TOOLS_REFUSED = /\btools?\b|tool[_ ]?choice|function[_ ]?call|--jinja/i;
const FORMAT_REFUSED = /response[_ ]?format|json[_ ]?schema|json[_ ]?object|grammar/i;
const MODEL_REFUSED = /model/i;

/** The JSON body of the probe completion: Lisa's model, one user message, one tool, a handful of tokens. */
export function probeCompletionBody(llm: AppConfig["llm"]): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: llm.model,
    messages: [{ role: "user", content: "Reply with the single word OK." }],
    tools: [PROBE_TOOL],
    tool_choice: "auto",
    max_tokens: PROBE_MAX_TOKENS,
    temperature: 0,
  };
  const format = responseFormat(llm.response_format);
  if (format !== undefined) body["response_format"] = format;
  return body;
}

function headers(llm: AppConfig["llm"], json: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(llm.extra_headers)) out[name.toLowerCase()] = value.reveal();
  out["accept"] = "application/json";
  if (json) out["content-type"] = "application/json";
  // The key travels only in this header, never in the URL or the output.
  if (llm.api_key !== null) out["authorization"] = `Bearer ${llm.api_key.reveal()}`;
  return out;
}

/** Model ids the server lists, or null when `/models` is unavailable or not the OpenAI shape. */
function servedModels(outcome: HttpOutcome): string[] | null {
  if (outcome.kind !== "response" || outcome.status < 200 || outcome.status >= 300 || outcome.truncated) return null;
  try {
    const parsed = modelListSchema.safeParse(JSON.parse(outcome.body));
    return parsed.success ? parsed.data.data.map((entry) => entry.id) : null;
  } catch {
    return null;
  }
}

function unreachable(config: AppConfig, outcome: HttpOutcome, context: ProbeContext): PreflightResult | null {
  const base = displayUrl(config.llm.base_url);
  if (outcome.kind === "timeout") return timedOutResult(NAME, `the LLM at ${base}`, context.timeoutMs);
  if (outcome.kind === "aborted") return failed(NAME, "check_cancelled", "the check was interrupted: run it again");
  if (outcome.kind === "network") {
    return failed(NAME, "llm_unreachable", `cannot reach the LLM at ${base} (${outcome.code}): check llm.base_url and that the server is running`);
  }
  return null;
}

function unauthorized(config: AppConfig, status: number): PreflightResult {
  return config.llm.api_key === null
    ? failed(NAME, "llm_unauthorized", `the LLM requires an API key (HTTP ${status}): set llm.api_key = "env:LISA_LLM_API_KEY" and the variable`)
    : failed(NAME, "llm_unauthorized", `the LLM rejected the API key (HTTP ${status}): check the environment variable that llm.api_key names`);
}

/** Explains a refused probe completion (status >= 300). */
function explainRefusal(config: AppConfig, status: number, body: string, served: readonly string[] | null): PreflightResult {
  const llm = config.llm;
  const unlisted = served !== null && !isListed(llm.model, served);
  if (status === 401 || status === 403) return unauthorized(config, status);
  if (status === 429) return failed(NAME, "llm_rate_limited", "the LLM rate-limited the check (HTTP 429): run it again later or raise the server's limits");
  const invalid = validationRefusal(config, status, body);
  if (invalid !== null) return invalid;
  if (status >= 500) {
    return failed(NAME, "llm_server_error", `the LLM server failed on a minimal request (HTTP ${status}): check its logs (is the model still loading?)`);
  }
  if (status === 404 && (unlisted || MODEL_REFUSED.test(body))) return modelMissing(llm.model, served);
  if (status === 404) {
    const url = displayUrl(completionsUrl(llm.base_url));
    return failed(NAME, "llm_endpoint_missing", `no chat-completions endpoint at ${url}: llm.base_url usually ends in /v1`);
  }
  if (TOOLS_REFUSED.test(body)) {
    return failed(NAME, "llm_tools_unsupported",
      `the LLM server rejected tool definitions (HTTP ${status}): enable tool calling (e.g. llama.cpp --jinja; ` +
      "vLLM --enable-auto-tool-choice with a --tool-call-parser; an Ollama model with tool support)");
  }
  if (llm.response_format !== "none" && FORMAT_REFUSED.test(body)) {
    return failed(NAME, "llm_response_format_unsupported",
      `the LLM server rejected response_format ${llm.response_format} (HTTP ${status}): set llm.response_format to a mode it supports ("none" always works)`);
  }
  if (unlisted || (status === 400 && /model.{0,40}(not found|does not exist|unknown|invalid)/i.test(body))) return modelMissing(llm.model, served);
  return failed(NAME, "llm_request_rejected",
    `the LLM server rejected a minimal chat completion with one tool (HTTP ${status}): make sure it supports tool calling ` +
    "(e.g. llama.cpp --jinja) and the configured llm.response_format");
}

async function probeWith(agent: Agent, config: AppConfig, context: ProbeContext): Promise<PreflightResult> {
  const llm = config.llm;
  const models = await httpProbe(agent, { method: "GET", url: joinUrl(llm.base_url, "models"), headers: headers(llm, false), maxBodyBytes: MODELS_MAX_BYTES }, context);
  const down = unreachable(config, models, context);
  if (down !== null) return down;
  if (models.kind === "response" && (models.status === 401 || models.status === 403)) return unauthorized(config, models.status);
  const served = servedModels(models);
  const chat = await httpProbe(agent, {
    method: "POST", url: completionsUrl(llm.base_url), headers: headers(llm, true),
    body: JSON.stringify(probeCompletionBody(llm)), maxBodyBytes: COMPLETION_MAX_BYTES,
  }, context);
  const chatDown = unreachable(config, chat, context);
  if (chatDown !== null) return chatDown;
  if (chat.kind !== "response") return failed(NAME, "check_cancelled", "the check was interrupted: run it again");
  if (chat.status < 200 || chat.status >= 300) return explainRefusal(config, chat.status, chat.body, served);
  let shapeOk = false;
  try {
    shapeOk = !chat.truncated && completionSchema.safeParse(JSON.parse(chat.body)).success;
  } catch {
    shapeOk = false;
  }
  if (!shapeOk) {
    return failed(NAME, "llm_protocol_error",
      `${displayUrl(completionsUrl(llm.base_url))} did not answer with an OpenAI-compatible chat completion: check llm.base_url`);
  }
  const problem = unlistedModel(llm.model, served) ?? speedProblem(config, chat.body)
    ?? await probeToolTemplate(agent, config, headers(llm, false), context);
  if (problem !== null) return problem;
  const listing = served === null ? "the server publishes no model list" : "listed by /models";
  return passed(NAME, `model ${printable(llm.model)} accepts tool definitions (${listing})`);
}

/** Probes the LLM endpoint through its own agent, closed afterwards. */
export async function probeLlm(config: AppConfig, context: ProbeContext): Promise<PreflightResult> {
  const agent = probeAgent(context.timeoutMs);
  try {
    return await probeWith(agent, config, context);
  } finally {
    await agent.destroy().catch(() => undefined);
  }
}
