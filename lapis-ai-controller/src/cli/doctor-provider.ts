// `doctor`'s checks of a Codex provider's model configuration:
// CODEX_HOME/config.toml names a provider with wire_api "responses" (current
// Codex rejects "chat"), its base URL answers /models and lists the model, and
// the model's context holds Codex's own prompt (measured: 4,649 tokens). Each
// failure carries one fix line. A llama-server model also gets the warning that
// MCP application tools do not reach it (llama.cpp drops Codex's `namespace`
// tools). Only loopback URLs are probed: the CLI may reach 127.0.0.1 only.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Json } from "../domain/records.ts";
import type { Check, DoctorCheck } from "./doctor-check.ts";

/** Tokens of Codex's own prompt (instructions and tools), measured with Codex 0.156.1 on llama-server. */
export const CODEX_PROMPT_TOKENS = 4_649;
const PROBE_DEADLINE_MS = 5_000;

type Toml = { top: Record<string, string | number | boolean>; sections: Record<string, Record<string, string | number | boolean>> };

/** Reads the flat `key = value` lines and `[a.b]` tables of a Codex config.toml (what these checks need). */
export function readCodexToml(text: string): Toml {
  const out: Toml = { top: {}, sections: {} };
  let table: Record<string, string | number | boolean> = out.top;
  for (const raw of text.split("\n")) {
    const line = raw.replace(/^\s+|\s+$/g, "");
    if (line === "" || line.startsWith("#")) continue;
    const header = /^\[\s*([^\]]+?)\s*\]$/.exec(line);
    if (header !== null) {
      const name = (header[1] as string).replace(/"/g, "");
      table = out.sections[name] ??= {};
      continue;
    }
    const pair = /^([A-Za-z0-9_-]+)\s*=\s*(.+?)\s*(#.*)?$/.exec(line);
    if (pair === null) continue;
    const value = pair[2] as string;
    if (/^".*"$/.test(value) || /^'.*'$/.test(value)) table[pair[1] as string] = value.slice(1, -1);
    else if (/^-?\d[\d_]*$/.test(value)) table[pair[1] as string] = Number(value.replace(/_/g, ""));
    else if (value === "true" || value === "false") table[pair[1] as string] = value === "true";
  }
  return out;
}

/** What the provider checks need. */
export type ProviderInputs = {
  readonly providers: Json | undefined;
  readonly env: (name: string) => string | undefined;
  readonly home: string;
  readonly fetch?: typeof fetch;
};

async function getJson(f: typeof fetch, url: string, key: string | undefined): Promise<{ ok: true; body: unknown } | { ok: false; why: string }> {
  try {
    const response = await f(url, { headers: key === undefined ? {} : { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(PROBE_DEADLINE_MS) });
    const text = await response.text();
    if (!response.ok) return { ok: false, why: `HTTP ${response.status}` };
    return { ok: true, body: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, why: (error as Error).name === "TimeoutError" ? "no answer within 5 s" : "not reachable" };
  }
}

function loopback(url: URL): boolean {
  return url.hostname === "127.0.0.1" || url.hostname === "localhost" || url.hostname === "[::1]";
}

/** The provider checks; none when no provider runs Codex (a `codex` provider). */
export async function providerChecks(inputs: ProviderInputs): Promise<Check[]> {
  const providers = inputs.providers as Record<string, { agent?: string; command?: string[] }> | undefined;
  const codex = Object.entries(providers ?? {}).filter(([id, p]) => id === "codex" || p?.agent === "codex" || (p?.command ?? []).some((c) => /codex-acp/.test(String(c))));
  if (codex.length === 0) return [];
  const f = inputs.fetch ?? fetch;
  const codexHome = inputs.env("CODEX_HOME") ?? join(inputs.home, ".codex");
  const path = join(codexHome, "config.toml");
  let toml: Toml;
  try {
    toml = readCodexToml(readFileSync(path, "utf8"));
  } catch {
    return [{ name: "codex-config", ok: false, note: `missing: ${path} — fix: set CODEX_HOME for serve, or write config.toml with model, model_provider and [model_providers.<id>] (npm run demo writes one)` }];
  }
  const checks: Check[] = [];
  const providerId = String(toml.top.model_provider ?? "openai");
  const model = toml.top.model === undefined ? null : String(toml.top.model);
  const section = toml.sections[`model_providers.${providerId}`];
  checks.push({ name: "codex-config", ok: model !== null, note: model === null ? `${path} names no model — fix: add model = "<name>"` : `${path}: model ${model}, provider ${providerId}` });
  if (section === undefined) {
    // Codex's built-in providers (openai) speak the Responses API.
    checks.push({ name: "wire-api", ok: providerId === "openai", note: providerId === "openai" ? "built-in openai provider (responses)" : `no [model_providers.${providerId}] table — fix: add it with base_url and wire_api = "responses"` });
    return checks;
  }
  const wire = String(section.wire_api ?? "responses");
  checks.push({ name: "wire-api", ok: wire === "responses", note: wire === "responses" ? "responses" : `wire_api = "${wire}" — fix: set wire_api = "responses" in [model_providers.${providerId}] (current Codex rejects "chat")` });
  const base = typeof section.base_url === "string" ? section.base_url.replace(/\/+$/, "") : "";
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    checks.push({ name: "model-endpoint", ok: false, note: `base_url missing or invalid — fix: set base_url = "http://127.0.0.1:PORT/v1" in [model_providers.${providerId}]` });
    return checks;
  }
  if (!loopback(url)) {
    checks.push({ name: "model-endpoint", ok: true, note: `warning: ${url.origin} not probed (the CLI reaches 127.0.0.1 only); Codex calls it directly` });
    return checks;
  }
  const keyEnv = typeof section.env_key === "string" ? section.env_key : undefined;
  const models = await getJson(f, `${base}/models`, keyEnv === undefined ? undefined : inputs.env(keyEnv));
  if (!models.ok) {
    checks.push({ name: "model-endpoint", ok: false, note: `${base}/models: ${models.why} — fix: start the model server (npm run demo starts llama-server), or correct base_url` });
    return checks;
  }
  checks.push({ name: "model-endpoint", ok: true, note: `${base}/models answers` });
  const listed = ((models.body as { data?: { id?: unknown; owned_by?: unknown }[] }).data ?? []);
  const ids = listed.map((m) => String(m.id));
  const found = model !== null && ids.includes(model);
  checks.push({ name: "model-listed", ok: found, note: found ? `${model} is listed` : `${model} is not among ${ids.slice(0, 5).join(", ") || "no models"} — fix: set model = "<listed id>", or start llama-server with -a ${model}` });
  const props = await getJson(f, `${url.origin}/props`, undefined);
  const llama = props.ok || listed.some((m) => m.owned_by === "llamacpp");
  const nCtx = props.ok ? Number((props.body as { default_generation_settings?: { n_ctx?: unknown } }).default_generation_settings?.n_ctx) : NaN;
  const configured = typeof toml.top.model_context_window === "number" ? toml.top.model_context_window : NaN;
  const context = Number.isFinite(nCtx) ? nCtx : configured;
  if (Number.isFinite(context)) {
    const big = context >= CODEX_PROMPT_TOKENS;
    checks.push({ name: "context-size", ok: big, note: big ? `${context} tokens >= Codex's prompt (${CODEX_PROMPT_TOKENS})` : `${context} tokens < Codex's prompt (${CODEX_PROMPT_TOKENS}) — fix: restart llama-server with -c 8192 (and set model_context_window = 8192)` });
  } else checks.push({ name: "context-size", ok: true, note: `warning: the server reports no context size; Codex's prompt needs ${CODEX_PROMPT_TOKENS} tokens` });
  if (Number.isFinite(nCtx) && nCtx !== configured) {
    checks.push({ name: "context-window", ok: true, note: `warning: model_context_window ${Number.isFinite(configured) ? configured : "unset"} differs from the server's ${nCtx} — fix: set model_context_window = ${nCtx} (avoids Codex's "Model metadata not found" fallback)` });
  }
  if (llama) checks.push({ name: "mcp-tools", ok: true, note: "warning: llama-server drops Codex's MCP (namespace) tools (llama.cpp issue 24295): application tools do not reach this model" });
  return checks;
}

/** The provider checks as one doctor check: the config's providers, `HOME` from the environment. */
export const codexModelCheck: DoctorCheck = (inputs) => providerChecks({ providers: inputs.sections?.providers, env: inputs.env, home: inputs.env("HOME") ?? "/" });
