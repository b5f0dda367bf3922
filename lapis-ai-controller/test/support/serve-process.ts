// Runs the real `lapis-ai-controller serve` (src/main.ts) as a child process
// under Node or Deno with a private HOME, config and database, for black-box
// protocol tests. Tokens reach the child only through its environment as
// `env:` references; every child is killed when the test ends.
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { TestContext } from "node:test";
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

/** Starts serve and waits for its readiness line. */
export async function startServe(
  t: TestContext,
  options: { tokens: readonly ServeToken[]; runtime?: "node" | "deno"; limits?: Record<string, unknown>; dir?: string },
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
    listen: { host: "127.0.0.1", port: 0 },
    ...(options.limits === undefined ? {} : { limits: { protocol: options.limits } }),
  };
  const configPath = join(dir, "config.json");
  writeFileSync(configPath, JSON.stringify(config), { mode: 0o600 });
  const workspace = join(dir, "workspace");
  const env: Record<string, string> = { HOME: dir, PATH: process.env.PATH ?? "/usr/bin:/bin" };
  for (const tk of options.tokens) env[tk.envName] = tk.value;
  const runtime = options.runtime ?? "node";
  const bin = join(PACKAGE, "node_modules/.bin", runtime);
  const script = join(PACKAGE, "src/main.ts");
  const args = runtime === "node"
    ? [script, "serve", "--config", configPath, "--workspace", workspace]
    : ["run", "--allow-read", "--allow-write", "--allow-env", "--allow-sys", "--allow-net=127.0.0.1", script, "serve",
      "--config", configPath, "--workspace", workspace];
  const child: ChildProcess = spawn(bin, args, { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
  child.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolveExit) => child.once("exit", (code) => resolveExit(code)));
  const stop = async (): Promise<number | null> => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    const code = await exited;
    clearTimeout(timer);
    return code;
  };
  t.after(stop);
  const ready = await new Promise<Record<string, unknown>>((resolveReady, reject) => {
    const deadline = setTimeout(() => reject(new Error(`serve not ready: ${err.slice(0, 500)}`)), READY_DEADLINE_MS);
    const check = () => {
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line === undefined) return;
      clearTimeout(deadline);
      child.stdout?.off("data", check);
      resolveReady(JSON.parse(line) as Record<string, unknown>);
    };
    child.stdout?.on("data", check);
    void exited.then((code) => reject(new Error(`serve exited ${code}: ${err.slice(0, 500)}`)));
  });
  return {
    url: String(ready.url),
    pid: child.pid as number,
    dir,
    databasePath: join(workspace, "instances", "default", "controller.sqlite"),
    argv: [bin, ...args],
    stdout: () => out,
    stderr: () => err,
    stop,
  };
}
