// The managed process client (P-SDK-04..12): an application starts the
// installed controller as its child. The credentials travel in one NDJSON
// request on the child's private stdin, written after spawn; stdin is left
// open and nothing waits for its finish or close (compiled Deno pipes may
// never emit them). The child answers one readiness line without
// credentials, optionally verified against an expected build; start
// failures carry the cause code, never the token.

import { spawn, type ChildProcess } from "node:child_process";
import process from "node:process";
import { accessSync, constants } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { ControllerClient } from "./client.ts";
import type { Json } from "./domain/records.ts";

/** The default readiness wait (the fragment: 60 s). */
export const DEFAULT_READINESS_MS = 60_000;
/** The longest readiness wait a caller may ask for. */
export const MAX_READINESS_MS = 600_000;
/** Longest wait for the child to stop after SIGTERM before SIGKILL. */
export const STOP_GRACE_MS = 15_000;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** How to start a managed controller. */
export interface ManagedOptions {
  /** The bootstrap token: sent only on stdin. */
  readonly token: string;
  /** Absolute, stable database path. */
  readonly databasePath: string;
  /** A bare name (resolved from PATH, then $HOME/.local/bin) or an absolute path. Default `lapis-ai-controller`. */
  readonly executable?: string;
  /** The child's whole environment besides PATH and HOME (the caller's allowlist). */
  readonly env?: Readonly<Record<string, string>>;
  /** PATH and HOME of the child and for resolving the executable; default this process's. */
  readonly path?: string;
  readonly home?: string;
  /** Generic provider and workspace definitions, retention, limits (as in the config file). */
  readonly providers?: Json;
  readonly workspaces?: Json;
  readonly retention?: "full" | "metadata-only";
  readonly limits?: Json;
  /** When given, readiness must report exactly this build digest, else `build_mismatch`. */
  readonly expectedBuild?: string;
  readonly readinessTimeoutMs?: number;
  /** Timers (a test clock may stand in). */
  readonly timers?: { setTimeout(fn: () => void, ms: number): unknown; clearTimeout(handle: unknown): void };
}

/** A start failure: a code and, where known, the child's cause code. Never credentials. */
export interface ManagedStartError {
  readonly code: "invalid_params" | "managed_start_failed" | "readiness_timeout" | "build_mismatch";
  readonly cause?: string;
}

/** A running managed controller. */
export interface ManagedController {
  readonly pid: number;
  readonly url: string;
  readonly build: string | null;
  readonly readiness: { readonly [key: string]: Json };
  /** Connects an SDK client with the managed token. */
  connect(): Promise<ControllerClient>;
  /** SIGTERM, then SIGKILL after the grace period; resolves when the child is gone. */
  stop(): Promise<void>;
}

/** Resolves a bare executable name from PATH, then $HOME/.local/bin (P-SDK-09). */
export function resolveExecutable(name: string, pathEnv: string, home: string | undefined): string | null {
  if (isAbsolute(name)) return name;
  if (name.includes("/")) return null;
  const dirs = [...pathEnv.split(delimiter), ...(home === undefined ? [] : [join(home, ".local", "bin")])];
  for (const dir of dirs) {
    if (dir === "" || !isAbsolute(dir)) continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      /* next */
    }
  }
  return null;
}

/** The child's environment: exactly the caller's allowlist plus PATH and HOME (P-SDK-10). */
export function childEnvironment(options: ManagedOptions): Record<string, string> | null {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (!ENV_NAME.test(name) || value.includes(options.token)) return null;
    env[name] = value;
  }
  env.PATH = options.path ?? process.env.PATH ?? "/usr/bin:/bin";
  const home = options.home ?? process.env.HOME;
  if (home !== undefined) env.HOME = home;
  return env;
}

function killAndWait(child: ChildProcess, grace: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), grace);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/** Starts the controller as a managed child and waits for its readiness. */
export async function startManagedController(options: ManagedOptions): Promise<{ ok: true; value: ManagedController } | { ok: false; error: ManagedStartError }> {
  const fail = (code: ManagedStartError["code"], cause?: string) => ({ ok: false as const, error: cause === undefined ? { code } : { code, cause } });
  const timeoutMs = options.readinessTimeoutMs ?? DEFAULT_READINESS_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_READINESS_MS) return fail("invalid_params", "readinessTimeoutMs");
  if (!isAbsolute(options.databasePath)) return fail("invalid_params", "databasePath");
  const env = childEnvironment(options);
  if (env === null) return fail("invalid_params", "env");
  const executable = resolveExecutable(options.executable ?? "lapis-ai-controller", env.PATH as string, env.HOME);
  if (executable === null) return fail("managed_start_failed", "executable_not_found");
  const request: Record<string, Json> = { protocol: "lapis-ai-controller/1", token: options.token, databasePath: options.databasePath };
  for (const key of ["providers", "workspaces", "retention", "limits"] as const) if (options[key] !== undefined) request[key] = options[key] as Json;
  const timers = options.timers ?? { setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms), clearTimeout: (h: unknown) => clearTimeout(h as ReturnType<typeof setTimeout>) };
  const child = spawn(executable, ["serve", "--managed"], { env, stdio: ["pipe", "pipe", "pipe"] });
  // A broken pipe is reported through the readiness outcome, not as an unhandled error.
  child.stdin?.on("error", () => undefined);
  child.stdout?.setEncoding("utf8");
  child.stderr?.setEncoding("utf8");
  const outcome = await new Promise<{ line: { [key: string]: Json } } | { exit: string } | { timeout: true }>((resolve) => {
    let out = "";
    let errText = "";
    const timer = timers.setTimeout(() => done({ timeout: true }), timeoutMs);
    const done = (value: { line: { [key: string]: Json } } | { exit: string } | { timeout: true }) => {
      timers.clearTimeout(timer);
      child.stdout?.off("data", onOut);
      resolve(value);
    };
    const onOut = (chunk: string) => {
      out += chunk;
      const nl = out.indexOf("\n");
      if (nl === -1) return;
      try {
        done({ line: JSON.parse(out.slice(0, nl)) as { [key: string]: Json } });
      } catch {
        done({ exit: "readiness_unparseable" });
      }
    };
    child.stdout?.on("data", onOut);
    child.stderr?.on("data", (chunk: string) => void (errText = (errText + chunk).slice(-4_096)));
    child.once("error", () => done({ exit: "spawn_failed" }));
    child.once("exit", () => done({ exit: /error: ([a-z][a-z0-9_]{0,63})/.exec(errText)?.[1] ?? "child_exited" }));
    child.once("spawn", () => void child.stdin?.write(`${JSON.stringify(request)}\n`));
  });
  if ("timeout" in outcome) {
    await killAndWait(child, STOP_GRACE_MS);
    return fail("readiness_timeout");
  }
  if ("exit" in outcome) {
    await killAndWait(child, STOP_GRACE_MS);
    return fail("managed_start_failed", outcome.exit);
  }
  const line = outcome.line;
  if (line.ready !== true || typeof line.url !== "string") {
    await killAndWait(child, STOP_GRACE_MS);
    return fail("managed_start_failed", typeof line.error === "string" ? line.error : "not_ready");
  }
  const build = typeof line.build === "string" ? line.build : null;
  if (options.expectedBuild !== undefined && build !== options.expectedBuild) {
    await killAndWait(child, STOP_GRACE_MS);
    return fail("build_mismatch");
  }
  const url = line.url;
  return {
    ok: true,
    value: {
      pid: child.pid as number,
      url,
      build,
      readiness: line,
      connect: () => ControllerClient.connect({ url, credential: { type: "token", token: options.token } }),
      stop: () => killAndWait(child, STOP_GRACE_MS),
    },
  };
}
