import { installScript, runInstallScript } from "../homeserver/install.ts";

/** Where the installer lives, relative to this file. */
export const INSTALL_SCRIPT = installScript("synapse");

/** The result of a successful `install.sh` run. */
export interface SynapseInstall {
  version: string;
  python: string;
}

// A first install downloads ~60 wheels; later runs only import-check the venv.
const INSTALL_TIMEOUT_MS = 15 * 60_000;

let installing: Promise<SynapseInstall> | undefined;

/**
 * Ensures the pinned Synapse venv exists (runs scripts/synapse/install.sh, which is a fast
 * no-op when the cached venv is ready) and returns its python; once per process.
 */
export function ensureSynapseInstalled(): Promise<SynapseInstall> {
  installing ??= runInstallScript(INSTALL_SCRIPT, "Synapse", ["synapse_version", "synapse_python"], INSTALL_TIMEOUT_MS).then(
    (fields) => ({ version: fields["synapse_version"]!, python: fields["synapse_python"]! }),
    (error: unknown) => {
      installing = undefined;
      throw error;
    },
  );
  return installing;
}
