import { spawn } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Where the installer lives, relative to this file. */
export const INSTALL_SCRIPT = resolve(dirname(fileURLToPath(import.meta.url)), "../../../scripts/synapse/install.sh");

/** The result of a successful `install.sh` run. */
export interface SynapseInstall {
  version: string;
  python: string;
}

// A first install downloads ~60 wheels; later runs only import-check the venv.
const INSTALL_TIMEOUT_MS = 15 * 60_000;
const MAX_CAPTURED_CHARS = 64_000;

let installing: Promise<SynapseInstall> | undefined;

function parseInstallOutput(stdout: string): SynapseInstall | undefined {
  const fields = new Map<string, string>();
  for (const line of stdout.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) fields.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim());
  }
  const version = fields.get("synapse_version");
  const python = fields.get("synapse_python");
  return version !== undefined && python !== undefined ? { version, python } : undefined;
}

function appendCapped(buffer: string, chunk: Buffer): string {
  const next = buffer + chunk.toString("utf8");
  return next.length > MAX_CAPTURED_CHARS ? next.slice(-MAX_CAPTURED_CHARS) : next;
}

function runInstaller(): Promise<SynapseInstall> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn("bash", [INSTALL_SCRIPT], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env },
      timeout: INSTALL_TIMEOUT_MS,
      killSignal: "SIGKILL",
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout = appendCapped(stdout, chunk)));
    child.stderr.on("data", (chunk: Buffer) => (stderr = appendCapped(stderr, chunk)));
    child.on("error", (error) => reject(new Error(`cannot run ${INSTALL_SCRIPT}: ${error.message}`)));
    child.on("close", (code, signal) => {
      const parsed = parseInstallOutput(stdout);
      if (code === 0 && parsed !== undefined) {
        resolvePromise(parsed);
        return;
      }
      const how = signal === null ? `exit code ${code}` : `signal ${signal} (deadline ${INSTALL_TIMEOUT_MS} ms)`;
      reject(new Error(`Synapse install failed (${how}):\n${stderr.trim()}`));
    });
  });
}

/**
 * Ensures the pinned Synapse venv exists (runs scripts/synapse/install.sh, which is a fast
 * no-op when the cached venv is ready) and returns its python; once per process.
 */
export function ensureSynapseInstalled(): Promise<SynapseInstall> {
  installing ??= runInstaller().catch((error: unknown) => {
    installing = undefined;
    throw error;
  });
  return installing;
}

