// Bench worlds: the test fakes plus a baseline user and room, Lisa as a child
// process (`node src/main.ts run --config F`, as test/support/lisa-harness.ts
// starts it), and the helpers every benchmark shares.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import type { ConfigOverrides } from "../../test/support/config.ts";
import type { FakeHomeserver } from "../../test/support/fake-homeserver.ts";
import { ALICE, createWorld, LISA, REPO, type World } from "../../test/support/lisa-harness.ts";
import type { Script } from "../../test/support/scripted-llm.ts";
import { quantile } from "./stats.ts";

/** The Node 24 binary every child runs with (Lisa, baselines, bare starts). */
export const NODE = join(REPO, "node_modules/.bin/node");
/** The baseline client's account and its own room (Lisa is not in it). */
export const BASE_USER = "@base:localhost";
export const BASE_PASSWORD = "base-password";
export const BASE_ROOM = "!base:localhost";

/** `count` allowed room ids `!bench<i>:localhost`. */
export function benchRooms(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `!bench${i + 1}:localhost`);
}

/** A world with `rooms` allowed rooms, the baseline account and room, and bench-friendly config. */
export async function benchWorld(options: { rooms: readonly string[]; llmScript?: Script; config?: ConfigOverrides }): Promise<World> {
  const overrides = options.config ?? {};
  const world = await createWorld({
    rooms: options.rooms,
    ...(options.llmScript === undefined ? {} : { llmScript: options.llmScript }),
    config: {
      ...overrides,
      // A real long-poll, as in production: no empty /sync rounds between invocations.
      matrix: { sync_timeout_ms: 30_000, ...overrides.matrix },
      runtime: { shutdown_grace_seconds: 2, ...overrides.runtime },
    },
  });
  world.hs.addUser(BASE_USER, BASE_PASSWORD);
  world.hs.createRoom(BASE_ROOM, [{ userId: BASE_USER, displayName: "Base" }, { userId: ALICE, displayName: "Alice" }]);
  // Closing also removes the world's temporary folder (config, persona, databases).
  return { ...world, close: async () => {
    await world.close();
    rmSync(world.dir, { recursive: true, force: true });
  } };
}

/** A child process whose output is drained (only the tail is kept, for diagnostics). */
export interface Child {
  readonly process: ChildProcess;
  readonly pid: number;
  readonly exited: Promise<number | null>;
  /** The last few KB of stdout and stderr. */
  tail(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Environment variables an operator may set for Lisa's process (in the
 * systemd unit or the shell) that change how the runtime uses memory or
 * threads: glibc malloc's tunables, Node's options, libuv's thread pool. The
 * bench passes exactly these through from its own environment, to every child
 * alike (Lisa, the bare Node floor, the minimal bot), so a knob is measured
 * against a floor that has it too. Nothing else leaks in: no secrets, no HOME.
 */
export const OPERATOR_KNOBS: readonly string[] = [
  "MALLOC_ARENA_MAX", "MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_", "GLIBC_TUNABLES",
  "NODE_OPTIONS", "UV_THREADPOOL_SIZE",
];

/** The operator knobs set in the bench's environment, by name. */
export function operatorEnv(source: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const knobs: Record<string, string> = {};
  for (const name of OPERATOR_KNOBS) {
    const value = source[name];
    if (value !== undefined && value !== "") knobs[name] = value;
  }
  return knobs;
}

/** `NAME=value ...` of the knobs in effect, or "none", for the report. */
export function describeKnobs(): string {
  const knobs = Object.entries(operatorEnv());
  return knobs.length === 0 ? "none" : knobs.map(([name, value]) => `${name}=${value}`).join(" ");
}

/** Spawns `args` with the Node 24 binary, draining output as a log collector would. */
export function spawnNode(args: readonly string[], env: Readonly<Record<string, string>> = {}): Child {
  const child = spawn(NODE, args, {
    cwd: REPO,
    env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", ...operatorEnv(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let tail = "";
  const keep = (chunk: Buffer): void => {
    tail = (tail + chunk.toString("utf8")).slice(-8_192);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  if (child.pid === undefined) throw new Error(`could not spawn ${NODE}`);
  return {
    process: child,
    pid: child.pid,
    exited,
    tail: () => tail,
    async stop(graceMs = 5_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Lisa's entry point run from source (type stripping), as the test harness runs her. */
export const SOURCE_ENTRY = join(REPO, "src/main.ts");

/** Starts Lisa as `node ENTRY run --config F` with the world's environment (default entry: src/main.ts). */
export function startLisa(world: World, options: { entry?: string; nodeFlags?: readonly string[]; env?: Readonly<Record<string, string>> } = {}): Child {
  const entry = options.entry ?? SOURCE_ENTRY;
  // Diagnosis only: BENCH_LISA_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles every Lisa child.
  const diagnosis = (process.env["BENCH_LISA_NODE_FLAGS"] ?? "").split(" ").filter((flag) => flag !== "");
  return spawnNode([...diagnosis, ...(options.nodeFlags ?? []), entry, "run", "--config", world.configPath], { ...world.env, ...options.env });
}

/** Resident set size (VmRSS) and its high-water mark (VmHWM) of `pid`, in bytes, from /proc. */
export function residentMemory(pid: number | "self"): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string): number => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status);
    if (match?.[1] === undefined) throw new Error(`no ${name} in /proc/${pid}/status`);
    return Number(match[1]) * 1024;
  };
  return { rss: field("VmRSS"), hwm: field("VmHWM") };
}

/** After `settleMs`, the median of five VmRSS readings 100 ms apart (a single reading can catch a GC in progress). */
export async function settledRss(pid: number, settleMs: number): Promise<number> {
  await delay(settleMs);
  const readings: number[] = [];
  for (let i = 0; i < 5; i += 1) {
    readings.push(residentMemory(pid).rss);
    await delay(100);
  }
  return quantile(readings, 0.5);
}

/** Waits for `predicate` over the fake homeserver, failing after `timeoutMs` with `what`. */
export async function waitForHs(hs: FakeHomeserver, predicate: (hs: FakeHomeserver) => boolean, timeoutMs: number, what: string): Promise<void> {
  try {
    await hs.waitFor(predicate, AbortSignal.timeout(timeoutMs));
  } catch (error) {
    throw new Error(`bench: timed out waiting for ${what}`, { cause: error });
  }
}

/** Number of `m.room.message` events Lisa has sent in `roomId`. */
export function lisaMessageCount(hs: FakeHomeserver, roomId: string): number {
  return hs.eventsBy(LISA, roomId).filter((e) => e.type === "m.room.message").length;
}

/** Waits until Lisa is long-polling `/sync` with her baseline done (the fake holds her request). */
export async function waitForLisaReady(world: World, child: Child, activeSyncs = 1, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!world.hs.requests("sync").some((r) => r.userId === LISA) || world.hs.activeSyncs < activeSyncs) {
    if (child.process.exitCode !== null) throw new Error(`Lisa exited early: ${child.tail()}`);
    if (Date.now() > deadline) throw new Error(`Lisa did not reach her long-poll: ${child.tail()}`);
    await delay(10);
  }
}
