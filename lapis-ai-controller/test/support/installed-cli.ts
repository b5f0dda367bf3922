// Drives the real install (`deno task install:cli`, scripts/stage-snapshot.mjs)
// and the installed launcher with HOME in a temporary directory. Every child
// is killed when its test ends; every wait has a deadline.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { TestContext } from "node:test";
import { FAKE_KEY_ENV } from "./codex-home.ts";
import { DENO_CHILD_ENV } from "./deno-env.ts";

/** The package root (the live checkout). */
export const PACKAGE = resolve(import.meta.dirname, "..", "..");
/** The pinned Deno from npm. */
export const PINNED_DENO = join(PACKAGE, "node_modules", "deno", "deno");
const STEP_DEADLINE_MS = 180_000;

/** The pinned Node, which runs the installed codex-acp named by path. */
export const PINNED_NODE = join(PACKAGE, "node_modules", "node", "bin", "node");
const CODEX_ACP = join(PACKAGE, "node_modules", "@agentclientprotocol", "codex-acp", "dist", "index.js");

/** Writes the installed CLI's token.env and config.json: one owner token and the real codex-acp (by path) as provider `codex`; `limits` is copied as given. */
export function writeCodexConfig(home: string, token: string, workspaces: Record<string, string>, limits?: Record<string, unknown>): void {
  const configDir = join(home, ".config", "lapis-ai-controller");
  mkdirSync(configDir, { recursive: true });
  writeFileSync(join(configDir, "token.env"), `LAPIS_AI_CONTROLLER_TOKEN=${token}\n`, { mode: 0o600 });
  writeFileSync(join(configDir, "config.json"), JSON.stringify({
    version: 1,
    tokens: [{ id: "owner", token: "env:LAPIS_AI_CONTROLLER_TOKEN" }],
    listen: { host: "127.0.0.1", port: 0 },
    workspaces,
    providers: { codex: { command: [PINNED_NODE, CODEX_ACP], mode: "read-only", envAllowlist: ["CODEX_HOME", FAKE_KEY_ENV], setupTimeoutMs: 90_000, killGraceMs: 3_000 } },
    ...(limits === undefined ? {} : { limits }),
  }), { mode: 0o600 });
}

/** A temporary HOME, removed after the test (read-only releases made writable first). */
export function homeDir(t: TestContext): string {
  const home = mkdtempSync(join(tmpdir(), "aic-home-"));
  t.after(() => {
    spawnSync("chmod", ["-R", "u+w", home], { timeout: 30_000 });
    rmSync(home, { recursive: true, force: true });
  });
  return home;
}

/** One finished command. */
export type Ran = { readonly code: number | null; readonly stdout: string; readonly stderr: string };

/** Every output seen in a suite, to grep for the token canary. */
export const seenOutputs: { readonly label: string; readonly text: string }[] = [];

function record(label: string, r: Ran): Ran {
  seenOutputs.push({ label, text: r.stdout + r.stderr });
  return r;
}

function baseEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return { HOME: home, PATH: process.env.PATH ?? "/usr/bin:/bin", NO_COLOR: "1", ...DENO_CHILD_ENV, ...extra };
}

/** `deno task install:cli [args]` in the checkout, with HOME=home. */
export function installCli(home: string, args: readonly string[] = [], env: Record<string, string> = {}): Ran {
  const r = spawnSync(PINNED_DENO, ["task", "--quiet", "install:cli", ...args], { cwd: PACKAGE, env: baseEnv(home, env), encoding: "utf8", timeout: STEP_DEADLINE_MS });
  return record(`install ${args.join(" ")}`, { code: r.status, stdout: r.stdout, stderr: r.stderr });
}

/** Stages only (no install) into `out`; returns the digest. */
export function stageOnly(out: string, note?: string): string {
  const node = join(PACKAGE, "node_modules", "node", "bin", "node");
  const r = spawnSync(node, ["--no-warnings", join(PACKAGE, "scripts", "stage-snapshot.mjs"), "--out", out, ...(note === undefined ? [] : ["--note", note])], { cwd: PACKAGE, encoding: "utf8", timeout: STEP_DEADLINE_MS });
  if (r.status !== 0) throw new Error(`stage failed: ${r.stderr}`);
  return (JSON.parse(r.stdout.trim().split("\n").at(-1) as string) as { digest: string }).digest;
}

/** Runs a staged CLI's own `install` (what install:cli does after staging). */
export function installStaged(home: string, staged: string, digest: string): Ran {
  const args = ["run", "--allow-read", "--allow-write", "--allow-env", "--allow-sys", "--allow-run", "--allow-net=127.0.0.1", "--config", join(staged, "deno.json"), join(staged, "src", "main.js"), "install", "--from", staged, "--digest", digest];
  const r = spawnSync(PINNED_DENO, args, { cwd: staged, env: baseEnv(home), encoding: "utf8", timeout: STEP_DEADLINE_MS });
  return record("install staged", { code: r.status, stdout: r.stdout, stderr: r.stderr });
}

/** Runs the installed launcher to completion (cwd `/`, so nothing relies on the checkout). */
export function launcher(home: string, args: readonly string[], env: Record<string, string> = {}): Ran {
  const r = spawnSync(join(home, ".local", "bin", "lapis-ai-controller"), args, { cwd: "/", env: baseEnv(home, env), encoding: "utf8", timeout: 60_000 });
  return record(`launcher ${args.join(" ")}`, { code: r.status, stdout: r.stdout, stderr: r.stderr });
}

/** A long-running launcher process (serve). */
export type Running = { readonly child: ChildProcess; stdout(): string; stderr(): string; readonly exited: Promise<number | string> };

/** Spawns the launcher; SIGKILLed at test end if still alive. */
export function spawnLauncher(t: TestContext, home: string, args: readonly string[], env: Record<string, string> = {}, label = "serve"): Running {
  const child = spawn(join(home, ".local", "bin", "lapis-ai-controller"), args, { cwd: "/", env: baseEnv(home, env), stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout?.setEncoding("utf8").on("data", (c: string) => (out += c));
  child.stderr?.setEncoding("utf8").on("data", (c: string) => (err += c));
  const exited = new Promise<number | string>((r) => child.on("exit", (code, signal) => {
    seenOutputs.push({ label, text: out + err });
    r(code ?? signal ?? "unknown");
  }));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exited;
    }
  });
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Waits for the readiness line of a running launcher. */
export async function readiness(proc: Running, deadlineMs = 60_000): Promise<Record<string, unknown>> {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    const line = proc.stdout().split("\n").find((l) => l.includes("\"ready\":true"));
    if (line !== undefined) return JSON.parse(line) as Record<string, unknown>;
    if (proc.child.exitCode !== null) throw new Error(`exited ${proc.child.exitCode} before ready: ${proc.stderr()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("readiness deadline passed");
}

/** True when a systemd user manager answers here (then service tests leave it alone). */
export function userManagerReachable(): boolean {
  return spawnSync("systemctl", ["--user", "show-environment"], { encoding: "utf8", timeout: 10_000 }).status === 0;
}
