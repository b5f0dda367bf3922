// Lisa herself in the demo: the configuration written for this run and her
// real service (`node src/main.ts run --config F`) as a child process whose
// JSON log goes to a file in the demo folder.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "smol-toml";
import { type Managed, startManaged } from "./children.ts";
import { BUNDLED_MODEL_ALIAS } from "./llama.ts";
import type { DemoOptions } from "./options.ts";
import { PASSWORD_ENV } from "./setup.ts";

/** What the configuration is made from. */
export interface LisaConfigInput {
  readonly dir: string;
  readonly homeserverUrl: string;
  readonly lisaUserId: string;
  readonly roomId: string;
  readonly personaPath: string;
  /** The bundled llama-server's `/v1` URL, or null when the person brought their own server. */
  readonly bundledLlmUrl: string | null;
  readonly options: DemoOptions;
}

const DATABASE = "lisa-state.sqlite3";
/** Lisa's shutdown grace in the demo (seconds); the demo waits a little longer before SIGKILL. */
export const SHUTDOWN_GRACE_SECONDS = 5;
const READY_TIMEOUT_MS = 120_000;

// SmolLM2-135M runs with a 4096-token window: keep prompt, context and tool
// output small enough that a request always fits. Its answers are at most
// 300 characters (the prose grammar, llama.ts), so 512 tokens never cut one off.
const BUNDLED_LIMITS = {
  llm: { request_timeout_seconds: 180, max_output_tokens: 512, max_request_characters: 10_000, max_response_characters: 1_000, max_iterations: 3, max_tool_calls: 2 },
  context: { max_events: 12, max_characters: 3_000, max_event_characters: 1_000 },
  web: { max_tool_output_characters: 3_000 },
} as const;

/** The configuration tables of this run (rewritten every run: ports and options may change). */
export function lisaConfig(input: LisaConfigInput): Record<string, Record<string, unknown>> {
  const { options } = input;
  const bundled = input.bundledLlmUrl !== null;
  const llm: Record<string, unknown> = bundled
    ? { base_url: input.bundledLlmUrl, model: BUNDLED_MODEL_ALIAS, ...BUNDLED_LIMITS.llm }
    : { base_url: options.llm?.url, model: options.llm?.model, request_timeout_seconds: 120 };
  if (!bundled && options.llm?.keyEnv !== null && options.llm?.keyEnv !== undefined) llm["api_key"] = `env:${options.llm.keyEnv}`;
  return {
    matrix: {
      homeserver_url: input.homeserverUrl, user_id: input.lisaUserId, device_id: "LISADEMO", device_display_name: "Lisa (demo)",
      password: `env:${PASSWORD_ENV}`, allowed_room_ids: [input.roomId], mention_aliases: ["Lisa", "@Lisa"], sync_timeout_ms: 10_000,
    },
    llm,
    persona: { path: input.personaPath },
    context: bundled ? { ...BUNDLED_LIMITS.context } : {},
    // No search URL: no [search] endpoint, so search is off and no web_search tool is offered.
    search: options.searchUrl === null ? {} : { endpoint: options.searchUrl },
    web: bundled ? { ...BUNDLED_LIMITS.web } : {},
    runtime: { database_path: DATABASE, shutdown_grace_seconds: SHUTDOWN_GRACE_SECONDS, invocation_timeout_seconds: 400, lease_seconds: 600, log_level: "INFO" },
    // The answer appears while she writes it (one message, edited as it grows).
    streaming: { enabled: true },
  };
}

/** Writes `config.toml` into the demo folder; returns its path. */
export function writeLisaConfig(input: LisaConfigInput): string {
  const path = join(input.dir, "config.toml");
  const header = "# Written by `npm run demo` on every run (edit persona.md instead; it is kept).\n";
  writeFileSync(path, header + stringify(lisaConfig(input)), { mode: 0o600 });
  return path;
}

function loggedEvent(logPath: string, from: number, event: string): boolean {
  if (!existsSync(logPath)) return false;
  return readFileSync(logPath, "utf8").slice(from).includes(`"event":"${event}"`);
}

/** Starts Lisa and waits until she has synced (first run: her baseline; later runs: service started). */
export async function startLisa(repo: string, configPath: string, dir: string, env: Record<string, string>): Promise<{ managed: Managed; logPath: string }> {
  const logPath = join(dir, "lisa.log");
  const firstRun = !existsSync(join(dir, DATABASE));
  const from = existsSync(logPath) ? readFileSync(logPath, "utf8").length : 0;
  const node = join(repo, "node_modules/.bin/node");
  const managed = startManaged("Lisa", node, [join(repo, "src/main.ts"), "run", "--config", configPath], { env, cwd: dir, logPath });
  const ready = firstRun ? "sync_baseline" : "service_started";
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!loggedEvent(logPath, from, ready)) {
    if (managed.hasExited()) throw new Error(`Lisa exited during startup (exit code ${managed.child.exitCode}); see ${logPath}`);
    if (Date.now() >= deadline) {
      await managed.stop(SHUTDOWN_GRACE_SECONDS * 1000 + 5_000);
      throw new Error(`Lisa did not start within ${READY_TIMEOUT_MS / 1000} s; see ${logPath}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { managed, logPath };
}
