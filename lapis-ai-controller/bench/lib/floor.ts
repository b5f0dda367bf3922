// The floor under the per-turn rows, measured in the same run: what one
// durable commit costs on the disk serve writes to (a small row in a WAL
// database with `synchronous = FULL`, as the controller's own store), what
// one loopback WebSocket round trip costs under serve's runtime (the process
// hop the controller adds), and how much the direct client's own time varies
// from turn to turn. The durable-before-acknowledged rule puts
// RULE_COMMITS commits on the path from submit to completed (see below), so
// a gap over the direct client below RULE_COMMITS commits plus one round
// trip is below the floor.
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { DENO_CHILD_ENV } from "../../test/support/deno-env.ts";
import { now, quantile, report, summary, type BenchRow } from "./stats.ts";

/**
 * The durable commits the rule needs in series between `submitTurn` and
 * `turns.wait` resolving, counted from the code (the same on both executors):
 * 1. the receipt, before `turns.submit` answers (the turn enters `preparing`
 *    in it when its workspace is free: domain/turn-execution.ts `claim`);
 * 2. the dispatch boundary, before the agent hears the prompt
 *    (turn-execution.ts `#run`, `crossed`);
 * 3. the outcome, before `turns.wait` answers (`#finish`), which takes the
 *    turn's last queued events into the same commit.
 * The agent's events in between are committed in batches while the agent
 * works (group commit); they hold serve's event loop but are not in series
 * with the agent's answer.
 */
export const RULE_COMMITS = 3;

/** Times one durable commit in `dir` per `sample()` call. */
export function durableCommitProbe(dir: string): { sample(): void; readonly samples: readonly number[]; close(): void } {
  const path = join(dir, "floor-probe.sqlite");
  const db = new DatabaseSync(path);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = FULL");
  db.exec("CREATE TABLE IF NOT EXISTS probe (n INTEGER NOT NULL, at INTEGER NOT NULL)");
  const insert = db.prepare("INSERT INTO probe (n, at) VALUES (?, ?)");
  const samples: number[] = [];
  return {
    samples,
    sample(): void {
      const t0 = now();
      db.exec("BEGIN IMMEDIATE");
      insert.run(samples.length, Date.now());
      db.exec("COMMIT");
      samples.push(now() - t0);
    },
    close(): void {
      db.close();
      rmSync(path, { force: true });
      rmSync(`${path}-wal`, { force: true });
      rmSync(`${path}-shm`, { force: true });
    },
  };
}

/** The middle half of a sample as "p25-p75 ms", the direct client's own turn-to-turn spread. */
export function middleHalf(values: readonly number[]): string {
  return `${quantile(values, 0.25).toFixed(1)}-${quantile(values, 0.75).toFixed(1)} ms`;
}

/** Loopback WebSocket round trips to a bare `ws` echo under `runtime` (bench/children/ws-echo.ts), sampled as the turns run. */
export async function hopProbe(runtime: "node" | "deno"): Promise<{ sample(count?: number): Promise<void>; readonly samples: readonly number[]; close(): void }> {
  const pkg = resolve(import.meta.dirname, "../..");
  const script = join(pkg, "bench/children/ws-echo.ts");
  const args = runtime === "node" ? [script] : ["run", "--allow-net=127.0.0.1", "--allow-env", "--allow-read", script];
  const child = spawn(join(pkg, "node_modules/.bin", runtime), args, { cwd: pkg, env: { ...process.env, ...DENO_CHILD_ENV }, stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error("ws echo not ready")), 30_000);
    child.stdout.on("data", (b: Buffer) => {
      const m = /"port":(\d+)/.exec(b.toString());
      if (m !== null) { clearTimeout(timer); ready(Number(m[1])); }
    });
  });
  const socket = new WebSocket(`ws://127.0.0.1:${port}`);
  await new Promise<void>((open, fail) => { socket.addEventListener("open", () => open()); socket.addEventListener("error", () => fail(new Error("ws echo refused"))); });
  // A frame the size of a turns.wait answer.
  const frame = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { pad: "x".repeat(600) } });
  const once = (): Promise<number> => new Promise((done) => {
    const t0 = now();
    socket.addEventListener("message", () => done(now() - t0), { once: true });
    socket.send(frame);
  });
  for (let i = 0; i < 5; i++) await once();
  const samples: number[] = [];
  return {
    samples,
    async sample(count = 3): Promise<void> { for (let i = 0; i < count; i++) samples.push(await once()); },
    close(): void { socket.close(); child.kill("SIGTERM"); },
  };
}

/**
 * The floor rows: one durable commit's median in the same run, and the floor
 * of the completed gap (RULE_COMMITS commits plus one loopback round trip)
 * beside the gap measured, with what the 1.05x goal allows.
 */
export function floorRows(commits: readonly number[], hops: readonly number[], gapMs: number, directMs: number, what: string): BenchRow[] {
  const c = summary(commits), h = summary(hops);
  const floor = RULE_COMMITS * c.median + h.median;
  const allowed = 0.05 * directMs;
  return [
    report({ row: "floor: durable commit", figure: `one synchronous=FULL commit (n=${c.n})`, value: c.median, baseline: gapMs, unit: "ms", goal: "reported", met: true, note: `p95 ${c.p95.toFixed(2)} ms; baseline: the controller's ${what} gap over the direct client` }),
    report({ row: "floor: rule + hop", figure: `${RULE_COMMITS} commits + 1 WS round trip`, value: floor, baseline: gapMs, unit: "ms", goal: "reported", met: true, note: `${RULE_COMMITS} x ${c.median.toFixed(2)} ms + ${h.median.toFixed(2)} ms (ws echo p95 ${h.p95.toFixed(2)}, n=${h.n}); baseline: the ${what} gap; 1.05x allows ${allowed.toFixed(1)} ms, ${allowed >= floor ? "above" : "below"} the floor` }),
  ];
}
