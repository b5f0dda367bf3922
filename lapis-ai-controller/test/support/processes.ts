// Spawning the real CLI under Node or Deno for black-box tests. Every child
// is killed when its test ends; every wait has a deadline.

import { spawn, type ChildProcess } from "node:child_process";
import { join, resolve } from "node:path";
import type { TestContext } from "node:test";
import { denoV8Args, nodeV8Args } from "../../src/cli/v8-flags.ts";
import { DENO_CHILD_ENV } from "./deno-env.ts";

/** The package root. */
export const PACKAGE_ROOT = resolve(import.meta.dirname, "..", "..");
/** The pinned Deno binary (from the `deno` devDependency). */
export const DENO = join(PACKAGE_ROOT, "node_modules", ".bin", "deno");
/** The CLI entry. */
export const MAIN = join(PACKAGE_ROOT, "src", "main.ts");
/** The Deno permissions `serve` runs with. */
export const DENO_FLAGS = ["--allow-read", "--allow-write", "--allow-env", "--allow-sys", "--allow-net=127.0.0.1"];

/** A runtime to run the CLI on. */
export type Runtime = "node" | "deno";

/** A spawned CLI process with its collected output. */
export interface CliProcess {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or signal name) once the process ends. */
  readonly exited: Promise<number | string>;
}

function command(runtime: Runtime, args: readonly string[]): [string, string[]] {
  // The V8 flags every way serve starts carries (src/cli/v8-flags.ts).
  return runtime === "node" ? [process.execPath, [...nodeV8Args(), MAIN, ...args]] : [DENO, ["run", "--quiet", ...DENO_FLAGS, ...denoV8Args(), MAIN, ...args]];
}

/** Spawns the CLI; the process is SIGKILLed at test end if still alive. */
export function spawnCli(t: TestContext, runtime: Runtime, args: readonly string[], env: Record<string, string>): CliProcess {
  const [file, argv] = command(runtime, args);
  const child = spawn(file, argv, {
    cwd: PACKAGE_ROOT,
    env: { PATH: process.env.PATH ?? "", NO_COLOR: "1", ...(runtime === "deno" ? DENO_CHILD_ENV : {}), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let errText = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (errText += chunk));
  const exited = new Promise<number | string>((resolveExit) => {
    child.on("exit", (code, signal) => resolveExit(code ?? signal ?? "unknown"));
  });
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exited;
    }
  });
  return { child, stdout: () => out, stderr: () => errText, exited };
}

/** Runs the CLI to completion within `deadlineMs`; fails the test when it overruns. */
export async function runCli(
  t: TestContext,
  runtime: Runtime,
  args: readonly string[],
  env: Record<string, string>,
  deadlineMs = 30_000,
): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const proc = spawnCli(t, runtime, args, env);
  const code = await withDeadline(proc.exited, deadlineMs, "cli exit");
  return { code, stdout: proc.stdout(), stderr: proc.stderr() };
}

/** Waits until the process printed its readiness line; rejects on exit or deadline. */
export async function waitReady(proc: CliProcess, deadlineMs = 30_000): Promise<Record<string, unknown>> {
  const started = Date.now();
  while (Date.now() - started < deadlineMs) {
    const line = proc.stdout().split("\n").find((l) => l.startsWith("{") && l.includes("\"ready\":true"));
    if (line !== undefined) return JSON.parse(line) as Record<string, unknown>;
    if (proc.child.exitCode !== null) throw new Error(`exited ${proc.child.exitCode} before ready: ${proc.stderr()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("readiness deadline passed");
}

/** Resolves `promise`, or rejects after `ms`. */
export async function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: deadline of ${ms} ms passed`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
