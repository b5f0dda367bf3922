// The demo's installs and files: the CLI (the real `install:cli` path into
// HOME/.local), the controller config (an agent workspace `main`, provider
// `codex` = the real Codex by path, natively over `codex app-server` or
// through codex-acp), and the chat app installed from the
// SDK's packed tarball into its own folder, as an application would.
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { runShown } from "./children.ts";

/** The package root. */
export const PACKAGE = resolve(import.meta.dirname, "..", "..");
const NODE = join(PACKAGE, "node_modules", "node", "bin", "node");
const CODEX_ACP = join(PACKAGE, "node_modules", "@agentclientprotocol", "codex-acp", "dist", "index.js");
const CODEX = join(PACKAGE, "node_modules", "@openai", "codex", "bin", "codex.js");
const APP_SOURCE = join(PACKAGE, "docs", "examples", "terminal-chat");
const STEP_DEADLINE_MS = 600_000;

/** The installed launcher under `home`. */
export function launcherPath(home: string): string {
  return join(home, ".local", "bin", "lapis-ai-controller");
}

/** Installs the CLI into `home` unless a launcher is there (or `reinstall`); true when it installed. */
export async function ensureCli(home: string, env: Record<string, string>, reinstall: boolean): Promise<boolean> {
  if (!reinstall && existsSync(launcherPath(home))) return false;
  await runShown(NODE, ["--no-warnings", join(PACKAGE, "scripts", "stage-snapshot.mjs"), "--install"], {
    env: { ...env, HOME: home }, cwd: PACKAGE, deadlineMs: STEP_DEADLINE_MS, captureStdout: true,
  });
  return true;
}

/** What the demo sets in the controller config. */
export type DemoConfig = { readonly home: string; readonly workspace: string; readonly keyEnv: string | null; readonly ephemeralPort: boolean; readonly executor: "native" | "acp" };

/** Provider `codex` for the chosen executor; both ask before every write (`read-only`). */
export function demoProvider(executor: "native" | "acp", keyEnv: string | null): Record<string, unknown> {
  const common = { mode: "read-only", envAllowlist: ["CODEX_HOME", ...(keyEnv === null ? [] : [keyEnv])], setupTimeoutMs: 120_000, killGraceMs: 3_000 };
  // Native: Codex's read-only sandbox, so every write needs an approval. ACP: codex-acp's "read-only" is its "Ask for approval" mode.
  return executor === "native" ? { kind: "codex-app-server", command: [NODE, CODEX, "app-server"], ...common } : { command: [NODE, CODEX_ACP], ...common };
}

/**
 * Adds the demo's agent workspace `main` and provider `codex` (plus
 * `codex-native` and `codex-acp`, one per executor) to the config the
 * install created (other keys, the token reference included, stay as they are;
 * in the operator's own HOME an existing `main` or `codex` is kept).
 * A demo HOME's service listens on an ephemeral loopback port, so it never
 * collides with an installed service on the default port.
 */
export function writeControllerConfig(c: DemoConfig): string {
  const path = join(c.home, ".config", "lapis-ai-controller", "config.json");
  const config = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  mkdirSync(c.workspace, { recursive: true, mode: 0o700 });
  const workspaces = (config.workspaces ?? {}) as Record<string, unknown>;
  const providers = (config.providers ?? {}) as Record<string, unknown>;
  // In the operator's own config an existing `main` or `codex` stays as the operator wrote it.
  const keep = !c.ephemeralPort;
  if (!keep || workspaces.main === undefined) workspaces.main = c.workspace;
  if (!keep || providers.codex === undefined) providers.codex = demoProvider(c.executor, c.keyEnv);
  // The chat's `--executor native|acp` picks one of these two whatever the demo's own `--executor` chose.
  for (const executor of ["native", "acp"] as const) {
    const id = `codex-${executor}`;
    if (!keep || providers[id] === undefined) providers[id] = demoProvider(executor, c.keyEnv);
  }
  config.workspaces = workspaces;
  config.providers = providers;
  if (c.ephemeralPort) config.listen = { host: "127.0.0.1", port: 0 };
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  return path;
}

function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/**
 * Packs the SDK (`stage-snapshot.mjs --pack`: the npm tarball of the public
 * facades) and installs it with the chat app into `appDir`; a second run with
 * the same tarball and app reuses the install.
 */
export async function ensureApp(appDir: string, env: Record<string, string>): Promise<boolean> {
  mkdirSync(appDir, { recursive: true });
  const packDir = join(appDir, ".pack");
  rmSync(packDir, { recursive: true, force: true });
  const packed = JSON.parse(await runShown(NODE, ["--no-warnings", join(PACKAGE, "scripts", "stage-snapshot.mjs"), "--pack", packDir], {
    env, cwd: PACKAGE, deadlineMs: STEP_DEADLINE_MS, captureStdout: true,
  })) as { tarball: string; sha256: string };
  const tarball = join(appDir, "lapis-ai-controller-0.1.0.tgz");
  copyFileSync(packed.tarball, tarball);
  rmSync(packDir, { recursive: true, force: true });
  for (const file of ["chat.mjs", "memory.mjs", "present.mjs", "threads.mjs", "package.json"]) copyFileSync(join(APP_SOURCE, file), join(appDir, file));
  const stamp = join(appDir, ".installed");
  const want = `${packed.sha256} ${sha256(join(appDir, "package.json"))}`;
  if (existsSync(stamp) && readFileSync(stamp, "utf8") === want && existsSync(join(appDir, "node_modules", "lapis-ai-controller"))) return false;
  // A new tarball under the same name and version: npm would keep the old copy and its lock entry.
  rmSync(join(appDir, "package-lock.json"), { force: true });
  rmSync(join(appDir, "node_modules", "lapis-ai-controller"), { recursive: true, force: true });
  // Every dependency of the tarball is already in this package's node_modules: seeded, the install
  // needs neither the registry nor the npm cache, and --offline makes a missing one fail at once, by name.
  await runShown(NODE, ["--no-warnings", join(PACKAGE, "scripts", "stage-snapshot.mjs"), "--seed", appDir], { env, cwd: PACKAGE, deadlineMs: STEP_DEADLINE_MS, captureStdout: true });
  await runShown("npm", ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"], { env, cwd: appDir, deadlineMs: STEP_DEADLINE_MS });
  writeFileSync(stamp, want);
  return true;
}
