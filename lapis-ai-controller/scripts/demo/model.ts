// The demo's model: by default the repository's shared llama-server + SmolLM2
// (scripts/llama/install.sh at the repository root, one cache for both
// packages), started on a free loopback port; or the operator's own
// Responses-API server (--model-url). Codex gets a CODEX_HOME whose provider
// points there over /v1/responses, with the model's context window so Codex
// need not guess it.
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { runShown, startServer, type Server } from "./children.ts";

/** The repository root's shared installer. */
export const LLAMA_INSTALL = resolve(import.meta.dirname, "..", "..", "..", "scripts", "llama", "install.sh");
/** The model name llama-server answers to (`-a`). */
export const LOCAL_MODEL = "smollm2";
/** Codex's own prompt is about 4,650 tokens: 8192 leaves room for the conversation. */
export const LOCAL_CONTEXT = 8192;
// A first install compiles llama.cpp: about 6 minutes on two idle cores, far more under load.
const INSTALL_DEADLINE_MS = 45 * 60_000;
const READY_DEADLINE_MS = 180_000;

/** Where Codex sends its requests. */
export type ModelTarget = { readonly baseUrl: string; readonly model: string; readonly keyEnv: string | null; readonly contextWindow: number | null; readonly local: boolean };

/** Installs (or reuses) llama-server and the SmolLM2 GGUF; the build's progress goes to the terminal. */
export async function installLlama(env: Record<string, string>): Promise<{ server: string; model: string }> {
  const out = await runShown("bash", [LLAMA_INSTALL], { env, cwd: resolve(LLAMA_INSTALL, ".."), deadlineMs: INSTALL_DEADLINE_MS, captureStdout: true });
  const field = (key: string) => {
    const line = out.split("\n").find((l) => l.startsWith(`${key}=`));
    if (line === undefined) throw new Error(`${LLAMA_INSTALL} printed no ${key}=`);
    return line.slice(key.length + 1).trim();
  };
  return { server: field("llama_server"), model: field("llama_model") };
}

/** A free loopback port (the listener is closed before the server binds it). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const port = (probe.address() as { port: number }).port;
      probe.close(() => resolvePort(port));
    });
  });
}

/**
 * Greedy sampling for the bundled model: llama-server's default temperature
 * (0.8, a fresh random seed per request) lets SmolLM2-135M wander off a
 * recalled fact it was handed; at 0 the same prompt gets the same answer.
 * Codex sends no temperature, so the server's default is what it gets.
 */
export const LOCAL_TEMPERATURE = "0";

/** Starts llama-server (one slot, one thread, 8192 tokens, the model's chat template, greedy sampling) and waits for /health. */
export async function startLlama(install: { server: string; model: string }, env: Record<string, string>, logDir: string): Promise<{ server: Server; baseUrl: string }> {
  const port = await freePort();
  const args = ["-m", install.model, "--host", "127.0.0.1", "--port", String(port), "-np", "1", "-t", "1", "-c", String(LOCAL_CONTEXT), "--jinja", "--no-webui",
    "--temp", LOCAL_TEMPERATURE, "-a", LOCAL_MODEL];
  const server = startServer("llama-server", install.server, args, { env, cwd: logDir, logPath: join(logDir, "llama-server.log") });
  const origin = `http://127.0.0.1:${port}`;
  const end = Date.now() + READY_DEADLINE_MS;
  while (Date.now() < end) {
    if (server.hasExited()) throw new Error(`llama-server exited during startup; see ${join(logDir, "llama-server.log")}`);
    try {
      const response = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      if (response.ok) return { server, baseUrl: `${origin}/v1` };
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  await server.stop(2_000);
  throw new Error(`llama-server was not healthy within ${READY_DEADLINE_MS / 1000} s`);
}

/** Writes CODEX_HOME/config.toml for the target (rewritten each run: a local port changes). */
export function writeCodexHome(codexHome: string, target: ModelTarget): void {
  mkdirSync(codexHome, { recursive: true, mode: 0o700 });
  const lines = [
    `model = ${JSON.stringify(target.model)}`,
    'model_provider = "demo"',
    ...(target.contextWindow === null ? [] : [`model_context_window = ${target.contextWindow}`]),
    "",
    "[model_providers.demo]",
    `name = ${JSON.stringify(target.local ? "llama-server" : "Responses API")}`,
    `base_url = ${JSON.stringify(target.baseUrl)}`,
    'wire_api = "responses"',
    ...(target.keyEnv === null ? [] : [`env_key = ${JSON.stringify(target.keyEnv)}`]),
    // A tiny local model answers slowly; a retry would only queue a second prompt behind the first.
    ...(target.local ? ["request_max_retries = 0", "stream_max_retries = 0"] : []),
    "",
    // The demo's own CODEX_HOME: Codex's plugin marketplace sync (github.com, chatgpt.com at every
    // app-server start) is no part of it, and with a local model the demo stays on the loopback.
    "[features]",
    "plugins = false",
    "",
  ];
  writeFileSync(join(codexHome, "config.toml"), lines.join("\n"), { mode: 0o600 });
}
