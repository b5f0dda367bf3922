// Where the native embedding model is installed, for the tests that run it.
// They never install it themselves (no network in tests): CI's .ci/run runs
// the repository root's scripts/embeddings/install.sh first. A missing model
// fails the test with that cause instead of skipping it.

import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** The install script's folder: LISA_EMBEDDINGS_DIR, else its default under ~/.cache/lisa. */
export function nativeModelDir(): string {
  const dir = process.env["LISA_EMBEDDINGS_DIR"] ?? join(homedir(), ".cache", "lisa", "embeddings-minilm-0.1.0");
  if (!existsSync(join(dir, ".lisa-embeddings-installed"))) {
    throw new Error(
      `the native embedding model is not installed in ${dir}: run \`bash scripts/embeddings/install.sh\` at the repository root first (CI's .ci/run does), or point LISA_EMBEDDINGS_DIR at its folder`,
    );
  }
  return dir;
}
