import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "smol-toml";
import { loadConfig } from "../../src/config/load.ts";
import type { AppConfig } from "../../src/config/types.ts";

/** Canary secret values: they must never appear in any output. */
export const CANARY = {
  matrixPassword: "canary-matrix-password-7f3a9c",
  llmKey: "canary-llm-key-41b2d8",
  searchKey: "canary-search-key-9e6c15",
  /** The crypto store passphrase of encrypted rooms (LISA-DEVICE-01), set even when e2ee is off. */
  storePassphrase: "canary-store-passphrase-5d0e27",
} as const;

/** Environment with every canary secret set. */
export const CANARY_ENV: Readonly<Record<string, string>> = {
  LISA_MATRIX_PASSWORD: CANARY.matrixPassword,
  LISA_LLM_API_KEY: CANARY.llmKey,
  LISA_SEARCH_API_KEY: CANARY.searchKey,
  LISA_E2EE_STORE_PASSPHRASE: CANARY.storePassphrase,
};

type Table = Record<string, unknown>;
/** Per-section overrides of the test configuration. */
export type ConfigOverrides = Partial<Record<"matrix" | "llm" | "persona" | "context" | "search" | "web" | "runtime" | "e2ee" | "streaming", Table>>;

/** A minimal valid configuration as TOML tables (loopback services, canary secrets). */
export function baseConfigTables(dir: string): Record<string, Table> {
  return {
    matrix: {
      homeserver_url: "http://127.0.0.1:1",
      user_id: "@lisa:localhost",
      device_id: "LISATEST",
      password: "env:LISA_MATRIX_PASSWORD",
      allowed_room_ids: ["!room1:localhost"],
      mention_aliases: ["Lisa", "@Lisa"],
      sync_timeout_ms: 200,
    },
    llm: { base_url: "http://127.0.0.1:1/v1", api_key: "env:LISA_LLM_API_KEY", model: "test-model" },
    persona: { path: join(dir, "persona.md") },
    search: { endpoint: "http://127.0.0.1:1/search", api_key: "env:LISA_SEARCH_API_KEY" },
    runtime: { database_path: join(dir, "state.sqlite3") },
  };
}

/** The persona text written by `writeTestConfig` unless overridden. */
export const TEST_PERSONA = "You are Lisa, a cheerful test persona who says 'indeed' often.";

/** Writes a config file and persona into a fresh temp dir (or `dir`); returns its path, env and loaded config. */
export function writeTestConfig(
  overrides: ConfigOverrides = {},
  options: { dir?: string; persona?: string; env?: Record<string, string> } = {},
): { dir: string; path: string; env: Record<string, string>; config: AppConfig } {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), "lisa-test-"));
  writeFileSync(join(dir, "persona.md"), options.persona ?? TEST_PERSONA);
  const tables = baseConfigTables(dir);
  for (const [section, values] of Object.entries(overrides)) tables[section] = { ...(tables[section] ?? {}), ...values };
  const path = join(dir, "config.toml");
  writeFileSync(path, stringify(tables));
  const env = { ...CANARY_ENV, ...(options.env ?? {}) };
  const loaded = loadConfig(path, env);
  if (!loaded.ok) throw new Error(`test config invalid: ${loaded.error.problems.join("; ")}`);
  return { dir, path, env, config: loaded.value };
}
