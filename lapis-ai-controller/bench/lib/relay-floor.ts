// The application side of the relay floor (bench/children/relay-floor.ts):
// starts the relay under serve's runtime with serve's V8 flags and the
// agent's environment, and runs turns through it the way the controller rows
// run theirs: submit, then wait on the answer, agent text timed as the
// relay's event frames arrive. Its rows put the relay beside the direct
// client and the controller measured in the same loop.
import { spawn, type ChildProcess } from "node:child_process";
import { join, resolve } from "node:path";
import { denoV8Args, nodeV8Args } from "../../src/cli/v8-flags.ts";
import { DENO_CHILD_ENV } from "../../test/support/deno-env.ts";
import { DENO_FLAGS } from "../../test/support/processes.ts";
import { cpuMsOf } from "./bench-serve.ts";
import { connectProfiler, inspectorUrl, writeProfile } from "./inspector-profile.ts";
import { now, quantile, report, summary, type BenchRow } from "./stats.ts";

/** The relay's own counts (bench/children/relay-floor.ts `stats`). */
export type RelayStats = { commits: number; events: number; commitMs: number };

/** The relay's counts per turn between two `stats()` answers. */
export function perTurn(from: RelayStats, to: RelayStats, turns: number): RelayStats {
  return { commits: (to.commits - from.commits) / turns, events: (to.events - from.events) / turns, commitMs: (to.commitMs - from.commitMs) / turns };
}

/** A running relay floor with its one client connection. */
export type RelayFloor = {
  /** Submits `text`, waits for the outcome; ms since submit. */
  run(text: string): Promise<{ firstTextMs: number; doneMs: number; state: string }>;
  /** CPU time (user + system, not its agent) of the relay process, in ms. */
  cpuMs(): number;
  /** The relay's own counts: durable commits, journaled events and ms spent in COMMIT so far. */
  stats(): Promise<RelayStats>;
  close(): Promise<void>;
};

const READY_MS = 120_000;
const TURN_MS = 120_000;

/** Starts the relay on `executor`'s agent in `cwd`, its database in `dir`. */
export async function startRelayFloor(options: { runtime: "node" | "deno"; executor: "acp" | "native"; env: Record<string, string>; cwd: string; dir: string }): Promise<RelayFloor> {
  const pkg = resolve(import.meta.dirname, "../..");
  const script = join(pkg, "bench/children/relay-floor.ts");
  const main = [script, options.executor, join(options.dir, "relay-floor.sqlite"), options.cwd];
  // BENCH_RELAY_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) reaches a Node relay's command line, for profiling it.
  const extra = (process.env.BENCH_RELAY_NODE_ARGS ?? "").split(" ").filter((a) => a.length > 0);
  // BENCH_RELAY_PROFILE=DIR: a CPU profile of the relay's main thread (either runtime, through the inspector,
  // as BENCH_SERVE_PROFILE does for serve) from its readiness to its close, written to DIR with a self-time summary.
  const profileDir = process.env.BENCH_RELAY_PROFILE;
  const inspect = profileDir === undefined ? [] : ["--inspect=127.0.0.1:0"];
  const args = options.runtime === "node" ? [...extra, ...inspect, ...nodeV8Args(), ...main] : ["run", ...inspect, ...DENO_FLAGS, "--allow-run", ...denoV8Args(), ...main];
  const child: ChildProcess = spawn(join(pkg, "node_modules/.bin", options.runtime), args, { cwd: options.dir, env: options.runtime === "deno" ? { ...DENO_CHILD_ENV, ...options.env }
    : options.env, stdio: ["pipe", "pipe", profileDir === undefined ? "inherit" : "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (b: Buffer) => { stderr += b.toString(); process.stderr.write(b); });
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const socket = await connectRelay(child, exited).catch(async (error: unknown) => {
    child.kill("SIGKILL");
    await exited;
    throw error;
  });
  const profiler = profileDir === undefined ? null : await connectProfiler(inspectorUrl(stderr) ?? "", 100);
  await profiler?.start();
  let nextId = 0;
  const pending = new Map<number, (result: Record<string, unknown>) => void>();
  let onText: (() => void) | null = null;
  socket.addEventListener("message", (e: MessageEvent) => {
    const m = JSON.parse(String(e.data)) as { id?: number; result?: Record<string, unknown>; method?: string; params?: { event?: { update?: { sessionUpdate?: string }; method?: string } } };
    if (m.id !== undefined) { pending.get(m.id)?.(m.result ?? {}); pending.delete(m.id); return; }
    const event = m.params?.event;
    if (event?.update?.sessionUpdate === "agent_message_chunk" || event?.method === "item/agentMessage/delta") onText?.();
  });
  const request = (method: string, params: unknown): Promise<Record<string, unknown>> => new Promise((answered, fail) => {
    const id = nextId++;
    const timer = setTimeout(() => { pending.delete(id); fail(new Error(`relay floor: ${method} unanswered`)); }, TURN_MS);
    pending.set(id, (result) => { clearTimeout(timer); answered(result); });
    socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
  });
  return {
    run: async (text) => {
      let first: number | null = null;
      onText = () => { if (first === null) first = now(); };
      const t0 = now();
      const { turnId } = await request("turns.submit", { commandId: crypto.randomUUID(), text });
      const outcome = await request("turns.wait", { turnId });
      const done = now();
      onText = null;
      return { firstTextMs: (first ?? done) - t0, doneMs: done - t0, state: String(outcome.state) };
    },
    cpuMs: () => cpuMsOf(child.pid ?? 0),
    stats: async () => {
      const s = await request("relay.stats", {});
      return { commits: Number(s.commits), events: Number(s.events), commitMs: Number(s.commitMs) };
    },
    close: async () => {
      if (profiler !== null && profileDir !== undefined) {
        writeProfile(profileDir, `relay-${options.runtime}-${options.executor}-${Date.now()}`, await profiler.stop());
        profiler.close();
      }
      socket.close();
      child.stdin?.end();
      const hard = setTimeout(() => child.kill("SIGKILL"), 10_000);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
      clearTimeout(hard);
    },
  };
}

/** Waits for the relay's readiness line and opens the one client connection. */
async function connectRelay(child: ChildProcess, exited: Promise<void>): Promise<WebSocket> {
  const port = await new Promise<number>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error("relay floor not ready")), READY_MS);
    let out = "";
    child.stdout?.on("data", (b: Buffer) => {
      out += b.toString();
      const m = /"port":(\d+)/.exec(out);
      if (m !== null) { clearTimeout(timer); ready(Number(m[1])); }
    });
    void exited.then(() => { clearTimeout(timer); fail(new Error("relay floor exited before ready")); });
  });
  const socket = new WebSocket(`ws://127.0.0.1:${port}`);
  await new Promise<void>((open, fail) => { socket.addEventListener("open", () => open()); socket.addEventListener("error", () => fail(new Error("relay floor refused"))); });
  return socket;
}

/** What the relay rows need of one loop: medians' samples of each side and the relay's cost per turn. */
export type RelaySample = {
  readonly what: string;
  readonly direct: readonly number[];
  readonly relay: readonly number[];
  readonly relayFirst: readonly number[];
  readonly directFirst: readonly number[];
  readonly controller: readonly number[];
  readonly relayCpuPerTurn: number;
  /** The relay's commits, events and ms in COMMIT, per turn. */
  readonly relayPerTurn: RelayStats;
};

/** The median of the per-turn differences `a[i] - b[i]` (the sides ran next to each other in turn i), in ms. */
export function pairedGap(a: readonly number[], b: readonly number[]): number {
  return quantile(a.slice(0, b.length).map((x, i) => x - (b[i] as number)), 0.5);
}

/** The goal of the completed rows, as a ratio over the direct client. */
export const COMPLETED_GOAL = 1.05;

/**
 * The relay rows: the relay over the direct client (the floor of any design
 * with a durable journal and a second process, measured in this run), the
 * controller over the relay (what the controller adds above that floor),
 * and whether the 1.05x goal lies below the floor in this run.
 */
export function relayRows(s: RelaySample): BenchRow[] {
  const d = summary(s.direct), r = summary(s.relay), c = summary(s.controller);
  const df = summary(s.directFirst), rf = summary(s.relayFirst);
  const floorRatio = r.median / d.median;
  const below = floorRatio > COMPLETED_GOAL;
  const verdict = below ? `the ${COMPLETED_GOAL}x goal is BELOW the relay floor in this run` : `the ${COMPLETED_GOAL}x goal is above the relay floor in this run`;
  return [
    report({ row: `relay floor: ${s.what}`, figure: `relay submit -> completed (n=${r.n})`, value: r.median, baseline: d.median, unit: "ms", goal: "reported", met: true,
      note: `${verdict}; gap ${(r.median - d.median).toFixed(1)} ms (paired per turn ${pairedGap(s.relay, s.direct).toFixed(1)}); relay first text ${rf.median.toFixed(1)} vs ${df.median.toFixed(1)} ms; relay CPU ${s.relayCpuPerTurn.toFixed(1)} ms/turn, ${s.relayPerTurn.commits.toFixed(1)} commits (${s.relayPerTurn.commitMs.toFixed(1)} ms in COMMIT) and ${s.relayPerTurn.events.toFixed(1)} events/turn; baseline: the direct client` }),
    report({ row: `ctl over relay: ${s.what}`, figure: "controller / relay, completed median", value: c.median, baseline: r.median, unit: "ms", goal: "reported", met: true,
      note: `controller/direct ${(c.median / d.median).toFixed(2)}, relay/direct ${floorRatio.toFixed(2)}; the controller adds ${(c.median - r.median).toFixed(1)} ms over the floor (paired per turn ${pairedGap(s.controller, s.relay).toFixed(1)}); ${verdict}` }),
  ];
}
