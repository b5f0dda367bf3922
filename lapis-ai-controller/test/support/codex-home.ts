// Per-test HOME, CODEX_HOME (with a generated config.toml pointing the real
// Codex at the scripted Responses-API stand-in) and workspace directory, so
// no real-agent test reads or writes the machine's own Codex state.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Directories and environment of one real-agent test. */
export type CodexHome = {
  readonly home: string;
  readonly codexHome: string;
  readonly workspace: string;
  /** Environment names and values the agent process needs (no real secret: the key is a fixed fake). */
  readonly env: Readonly<Record<string, string>>;
};

/** The env name Codex reads the (fake) provider key from. */
export const FAKE_KEY_ENV = "AIC_FAKE_MODEL_KEY";

/** Writes HOME, CODEX_HOME/config.toml and a workspace under `dir`. */
export function writeCodexHome(dir: string, modelBaseUrl: string): CodexHome {
  const home = join(dir, "home");
  const codexHome = join(home, ".codex");
  const workspace = join(dir, "workspace");
  for (const d of [home, codexHome, workspace]) mkdirSync(d, { recursive: true, mode: 0o700 });
  const toml = [
    'model = "scripted-model"',
    'model_provider = "scripted"',
    "",
    "[model_providers.scripted]",
    'name = "scripted Responses-API stand-in"',
    `base_url = ${JSON.stringify(modelBaseUrl)}`,
    'wire_api = "responses"',
    `env_key = "${FAKE_KEY_ENV}"`,
    "request_max_retries = 0",
    "stream_max_retries = 0",
    "",
    // Codex's plugin feature syncs the curated plugin marketplace at every
    // app-server start (git ls-remote https://github.com/openai/plugins.git,
    // api.github.com, chatgpt.com): DNS and traffic off the loopback. Tests
    // and the bench reach 127.0.0.1 only (test/integration/no-phone-home.test.ts).
    "[features]",
    "plugins = false",
    "",
  ].join("\n");
  writeFileSync(join(codexHome, "config.toml"), toml, { mode: 0o600 });
  return { home, codexHome, workspace, env: { HOME: home, CODEX_HOME: codexHome, [FAKE_KEY_ENV]: "scripted-not-a-secret" } };
}
