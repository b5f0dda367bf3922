// Start to first /sync: spawning `node src/main.ts run --config F` until the
// fake homeserver sees Lisa's first /sync request, against a bare `node -e ""`
// start to exit with the same binary, interleaved A/B.
import { performance } from "node:perf_hooks";
import { setTimeout as delay } from "node:timers/promises";
import { endpointIs, type HttpObserver } from "./lib/observe.ts";
import { distribution, fmtDist, interleave, type ReportRow } from "./lib/stats.ts";
import type { BenchResult } from "./lib/types.ts";
import { benchRooms, benchWorld, spawnNode, startLisa } from "./lib/world.ts";

/** Options of the start-up benchmark. */
export interface StartupBenchOptions {
  readonly rounds: number;
  /** A built dist/main.js to time as well (the packaged binary's way), or null. */
  readonly distEntry: string | null;
}

/** Runs the benchmark; `observer` must be recording. */
export async function benchStartup(observer: HttpObserver, options: StartupBenchOptions): Promise<BenchResult> {
  const world = await benchWorld({ rooms: benchRooms(3) });
  const port = Number(new URL(world.hs.url).port);
  const toSync: number[] = [];
  const toLogin: number[] = [];
  const distToSync: number[] = [];
  const bare: number[] = [];
  const lisaStart = async (record: boolean, entry?: string): Promise<void> => {
    const started = performance.now();
    const lisa = startLisa(world, entry === undefined ? {} : { entry });
    try {
      const deadline = Date.now() + 30_000;
      let sync;
      while ((sync = observer.first(started, (m) => m.port === port && m.phase === "arrived" && endpointIs(m, "sync"))) === undefined) {
        if (lisa.process.exitCode !== null || Date.now() > deadline) throw new Error(`Lisa never reached /sync: ${lisa.tail()}`);
        await delay(2);
      }
      const login = observer.first(started, (m) => m.port === port && m.phase === "arrived" && endpointIs(m, "login"));
      if (record && entry !== undefined) distToSync.push(sync.at - started);
      if (record && entry === undefined) {
        toSync.push(sync.at - started);
        if (login !== undefined) toLogin.push(login.at - started);
      }
    } finally {
      await lisa.stop();
    }
  };
  const bareStart = async (): Promise<void> => {
    const started = performance.now();
    const child = spawnNode(["-e", ""]);
    await child.exited;
    bare.push(performance.now() - started);
  };
  try {
    await lisaStart(false); // creates the database and warms the file cache: later starts are restarts
    await bareStart();
    bare.length = 0;
    const dist = options.distEntry;
    if (dist !== null) await lisaStart(false, dist);
    await interleave(options.rounds, async () => {
      await lisaStart(true);
      if (dist !== null) await lisaStart(true, dist);
    }, bareStart);
    const lisa = distribution(toSync);
    const baseline = distribution(bare);
    const ratio = lisa.median / baseline.median;
    const login = distribution(toLogin);
    const rows: ReportRow[] = [{
      figure: "start to first /sync request (node src/main.ts, as the harness)", value: fmtDist(lisa, "ms", 0),
      baseline: `bare node start ${fmtDist(baseline, "ms", 0)}`, ratio, goal: "<= 3x (median)", met: ratio <= 3,
    }];
    if (dist !== null) {
      const built = distribution(distToSync);
      rows.push({
        figure: "start to first /sync request (built dist/main.js, as the packaged binary)", value: fmtDist(built, "ms", 0),
        baseline: `bare node start ${fmtDist(baseline, "ms", 0)}`, ratio: built.median / baseline.median, goal: "<= 3x (median)",
        met: built.median / baseline.median <= 3,
      });
    }
    return {
      rows,
      notes: [
        `startup: spawn -> POST /login ${fmtDist(login, "ms", 0)}; the rest until /sync is login, Pandoc version check and the ledger's startup work`,
        `startup: p95 ratio ${(lisa.p95 / baseline.p95).toFixed(2)}x; existing database (restart), ${world.config.matrix.allowed_room_ids.length} allowed rooms`,
      ],
    };
  } finally {
    await world.close();
  }
}
