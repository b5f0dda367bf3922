// Runs the real `lapis-ai-controller serve` (src/main.ts) as a child process
// under Node or Deno with a private HOME, config and database, for black-box
// protocol tests. Tokens reach the child only through its environment as
// `env:` references; every child is killed when the test ends.
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { TestContext } from "node:test";
import { denoV8Args, nodeV8Args } from "../../src/cli/v8-flags.ts";
import { DENO_CHILD_ENV } from "./deno-env.ts";
import { DENO_FLAGS, MAIN } from "./processes.ts";
import { tempDir } from "./temp.ts";

const PACKAGE = resolve(import.meta.dirname, "../..");
const READY_DEADLINE_MS = 30_000;

/** A token configured as `env:<envName>`. */
export interface ServeToken {
  readonly id: string;
  readonly envName: string;
  readonly value: string;
  readonly principal?: string;
  readonly application?: string;
  readonly scopes?: readonly string[];
  readonly workspaces?: readonly string[];
}

/** A running serve child. */
export interface ServeProcess {
  readonly url: string;
  readonly pid: number;
  readonly dir: string;
  readonly databasePath: string;
  readonly argv: readonly string[];
  stdout(): string;
  stderr(): string;
  /** Sends SIGTERM and waits for exit (SIGKILL after a deadline). */
  stop(): Promise<number | null>;
}

/** A spawned serve child before and after its readiness line; the building block of every serve harness here. */
export interface ServeChild {
  readonly child: ChildProcess;
  readonly argv: readonly string[];
  /** Resolves with the exit code once the child is gone. */
  readonly exited: Promise<number | null>;
  /** The parsed readiness line; rejects if serve exits first or misses the deadline. */
  readonly ready: Promise<Record<string, unknown>>;
  stdout(): string;
  stderr(): string;
}

/** Spawns `serve --config --workspace` under Node or Deno (Deno gets serve's launcher permissions, plus --allow-run when agents run). */
export function spawnServe(options: {
  dir: string; configPath: string; workspace: string; env: Readonly<Record<string, string>>; runtime: "node" | "deno"; allowRun: boolean;
  /** false: start without serve's V8 flags, as a hand-run `node src/main.ts serve` does (default true). */
  v8Flags?: boolean;
  /** Extra runtime arguments before the entry (e.g. Deno's `--inspect=127.0.0.1:0` for a profile); none by default. */
  runtimeArgs?: readonly string[];
}): ServeChild {
  const bin = join(PACKAGE, "node_modules/.bin", options.runtime);
  const main = [MAIN, "serve", "--config", options.configPath, "--workspace", options.workspace];
  const flags = options.v8Flags !== false;
  // The V8 flags every way serve starts carries (src/cli/v8-flags.ts).
  const extra = options.runtimeArgs ?? [];
  const args = options.runtime === "node" ? [...(flags ? nodeV8Args() : []), ...extra, ...main] : ["run", ...DENO_FLAGS, ...(options.allowRun ? ["--allow-run"] : []), ...(flags ? denoV8Args() : []), ...extra, ...main];
  const child: ChildProcess = spawn(bin, args, { cwd: options.dir, env: options.runtime === "deno" ? { ...DENO_CHILD_ENV, ...options.env } : options.env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
  child.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolveExit) => child.once("exit", (code) => resolveExit(code)));
  const ready = new Promise<Record<string, unknown>>((resolveReady, reject) => {
    const deadline = setTimeout(() => reject(new Error(`serve not ready: ${err.slice(0, 500)}`)), READY_DEADLINE_MS);
    const check = () => {
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line === undefined) return;
      clearTimeout(deadline);
      child.stdout?.off("data", check);
      resolveReady(JSON.parse(line) as Record<string, unknown>);
    };
    child.stdout?.on("data", check);
    void exited.then((code) => { clearTimeout(deadline); reject(new Error(`serve exited ${code}: ${err.slice(0, 500)}`)); });
  });
  return { child, argv: [bin, ...args], exited, ready, stdout: () => out, stderr: () => err };
}

/** Sends `signal` unless the child is already gone and waits for exit (SIGKILL after a deadline). */
export async function stopServeChild(serve: ServeChild, signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
  const { child } = serve;
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  const code = await serve.exited;
  clearTimeout(timer);
  return code;
}

/** Starts serve and waits for its readiness line. */
export async function startServe(
  t: TestContext,
  options: { tokens: readonly ServeToken[]; runtime?: "node" | "deno"; limits?: Record<string, unknown>; limitSections?: Record<string, unknown>; dir?: string; listen?: Record<string, unknown>; v8Flags?: boolean; extraEnv?: Readonly<Record<string, string>> },
): Promise<ServeProcess> {
  const dir = options.dir ?? tempDir(t, "aic-serve-");
  const config = {
    version: 1,
    tokens: options.tokens.map((tk) => ({
      id: tk.id,
      token: `env:${tk.envName}`,
      ...(tk.principal === undefined ? {} : { principal: tk.principal }),
      ...(tk.application === undefined ? {} : { application: tk.application }),
      ...(tk.scopes === undefined ? {} : { scopes: tk.scopes }),
      ...(tk.workspaces === undefined ? {} : { workspaces: tk.workspaces }),
    })),
    listen: { host: "127.0.0.1", port: 0, ...options.listen },
    ...(options.limits === undefined && options.limitSections === undefined ? {} : { limits: { ...options.limitSections, ...(options.limits === undefined ? {} : { protocol: options.limits }) } }),
  };
  const configPath = join(dir, "config.json");
  writeFileSync(configPath, JSON.stringify(config), { mode: 0o600 });
  const workspace = join(dir, "workspace");
  const env: Record<string, string> = { HOME: dir, PATH: process.env.PATH ?? "/usr/bin:/bin" };
  for (const tk of options.tokens) env[tk.envName] = tk.value;
  Object.assign(env, options.extraEnv);
  const serve = spawnServe({ dir, configPath, workspace, env, runtime: options.runtime ?? "node", allowRun: false, ...(options.v8Flags === undefined ? {} : { v8Flags: options.v8Flags }) });
  const stop = () => stopServeChild(serve);
  t.after(stop);
  const ready = await serve.ready;
  return {
    url: String(ready.url),
    pid: serve.child.pid as number,
    dir,
    databasePath: join(workspace, "instances", "default", "controller.sqlite"),
    argv: serve.argv,
    stdout: serve.stdout,
    stderr: serve.stderr,
    stop,
  };
}
