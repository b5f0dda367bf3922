// The controller side of every benchmark row: the real `serve` (Node or Deno)
// with the real codex-acp + Codex as provider `codex`, whose model is the
// scripted Responses-API stand-in. Same HOME/CODEX_HOME layout as the tests.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { ControllerClient } from "../../src/client.ts";
import { FAKE_KEY_ENV, writeCodexHome, type CodexHome } from "../../test/support/codex-home.ts";
import { spawnServe, stopServeChild, type ServeChild } from "../../test/support/serve-process.ts";
import { connectProfiler, inspectorUrl, writeProfile } from "./inspector-profile.ts";

const TOKEN_ENV = "AIC_BENCH_TOKEN";
const TOKEN = "bench-token-not-a-secret-3f9a1c7e5b2d4086";

/** A running bench serve. */
export type BenchServe = {
  readonly dir: string;
  readonly home: CodexHome;
  readonly url: string;
  readonly pid: number;
  readonly databasePath: string;
  /** Workspace names configured, each its own directory. */
  readonly workspaces: readonly string[];
  connect(): Promise<ControllerClient>;
  /** What serve wrote to stderr (codes only, never secrets). */
  stderr(): string;
  /** What serve wrote to stdout (its readiness line; V8's traces when profiling). */
  stdout(): string;
  /** Resident set size of the serve process itself (not its agents), in MiB. */
  rssMiB(): number;
  /** CPU time (user + system, all its threads, not its agents) the serve process has used, in ms. */
  cpuMs(): number;
  /** Stops the serve process and removes its folder. */
  stop(): Promise<void>;
  /** Stops the serve process only; the folder and database stay for the caller. */
  halt(): Promise<void>;
  /** Stops serve, runs `between` (e.g. growing the database) and starts it again on the same config and database. */
  restart(between?: () => void): Promise<void>;
};

/** Reads VmRSS of `pid` in MiB from /proc. */
export function rssMiBOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? "0");
  return kb / 1024;
}

/** User + system CPU time of `pid` (every thread, not its children) in ms, from /proc (10 ms ticks). */
export function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Starts serve with `workspaceCount` workspaces (`ws0`, `ws1`, …) and the model at `modelBaseUrl`. */
export async function startBenchServe(options: { modelBaseUrl: string; runtime: "node" | "deno"; workspaceCount?: number; limits?: Record<string, unknown>; groupCommitMax?: number | undefined; executor?: "acp" | "native" }): Promise<BenchServe> {
  const dir = mkdtempSync(join(tmpdir(), "aic-bench-"));
  const home = writeCodexHome(dir, options.modelBaseUrl);
  const names = Array.from({ length: options.workspaceCount ?? 1 }, (_, i) => `ws${i}`);
  const workspaces: Record<string, string> = {};
  for (const name of names) {
    const path = join(dir, "workspaces", name);
    mkdirSync(path, { recursive: true });
    workspaces[name] = path;
  }
  const config = {
    version: 1,
    tokens: [{ id: "bench", token: `env:${TOKEN_ENV}`, principal: "bench", application: "bench" }],
    listen: { host: "127.0.0.1", port: 0 },
    workspaces,
    // Provider `codex` either through codex-acp (ACP) or natively over `codex app-server`.
    providers: { codex: options.executor === "native"
      ? { kind: "codex-app-server", envAllowlist: ["CODEX_HOME", FAKE_KEY_ENV], setupTimeoutMs: 120_000, killGraceMs: 3_000 }
      : { agent: "codex", mode: "read-only", envAllowlist: ["CODEX_HOME", FAKE_KEY_ENV], setupTimeoutMs: 120_000, killGraceMs: 3_000 } },
    ...(options.limits === undefined && options.groupCommitMax === undefined ? {} : {
      limits: { ...options.limits, ...(options.groupCommitMax === undefined ? {} : { storage: { groupCommitMax: options.groupCommitMax } }) },
    }),
  };
  const configPath = join(dir, "config.json");
  writeFileSync(configPath, JSON.stringify(config), { mode: 0o600 });
  const env: Record<string, string> = { ...home.env, PATH: process.env.PATH ?? "/usr/bin:/bin", [TOKEN_ENV]: TOKEN, NODE_OPTIONS: process.env.BENCH_SERVE_NODE_OPTIONS ?? "",
    // Extra V8 flags for a Deno serve when profiling (e.g. --trace-gc); serve's own flags stay on its command line.
    ...(process.env.BENCH_SERVE_DENO_V8_FLAGS === undefined ? {} : { DENO_V8_FLAGS: process.env.BENCH_SERVE_DENO_V8_FLAGS }),
    // Deno's module cache is the bench's own, as for the bare server it is compared with and for an
    // installed serve that restarts: with its private HOME a Deno serve started with an empty cache
    // every time, analysing every module at start on 30+ threads (about 20 MiB more idle RSS).
    DENO_DIR: process.env.DENO_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "deno") };
  const workspace = join(dir, "controller");
  let child: ServeChild | null = null;
  let ready: Record<string, unknown> = {};
  // BENCH_SERVE_PROFILE=DIR: a CPU profile of serve's main thread (either runtime, through the inspector;
  // Deno has no --cpu-prof) from its readiness to its stop, written to DIR with a self-time summary on stderr.
  const profileDir = process.env.BENCH_SERVE_PROFILE;
  let profiler: Awaited<ReturnType<typeof connectProfiler>> | null = null;
  const launch = async () => {
    // BENCH_SERVE_INSPECT=1: the inspector without a profile (a probe reads the heap through it).
    const inspect = profileDir !== undefined || process.env.BENCH_SERVE_INSPECT === "1";
    child = spawnServe({ dir, configPath, workspace, env, runtime: options.runtime, allowRun: true, ...(inspect ? { runtimeArgs: ["--inspect=127.0.0.1:0"] } : {}) });
    ready = await child.ready;
    if (profileDir !== undefined) {
      profiler = await connectProfiler(inspectorUrl(child.stderr()) ?? "", 100);
      await profiler.start();
    }
  };
  await launch();
  const stopChild = async () => {
    if (profiler !== null && profileDir !== undefined) {
      const profile = await profiler.stop();
      profiler.close();
      profiler = null;
      writeProfile(profileDir, `serve-${options.runtime}-${options.executor ?? "acp"}-${Date.now()}`, profile);
    }
    if (child !== null) await stopServeChild(child);
    child = null;
  };
  return {
    dir,
    home,
    workspaces: names,
    get url() { return String(ready.url); },
    get pid() { return (child as ServeChild | null)?.child.pid ?? 0; },
    databasePath: join(workspace, "instances", "default", "controller.sqlite"),
    connect: () => ControllerClient.connect({ url: String(ready.url), credential: { type: "token", token: TOKEN }, maxReconnectAttempts: 0, requestTimeoutMs: 120_000 }),
    stderr: () => (child as ServeChild | null)?.stderr() ?? "",
    stdout: () => (child as ServeChild | null)?.stdout() ?? "",
    rssMiB: () => rssMiBOf((child as ServeChild | null)?.child.pid ?? 0),
    cpuMs: () => cpuMsOf((child as ServeChild | null)?.child.pid ?? 0),
    restart: async (between) => { await stopChild(); between?.(); await launch(); },
    halt: stopChild,
    stop: async () => { await stopChild(); rmSync(dir, { recursive: true, force: true }); },
  };
}
