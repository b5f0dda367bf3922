// Row 7: startup validation (openSqliteStore: lock, schema check, every
// retained row validated, journal sequence, foreign keys, quick_check) at 10k,
// 100k and 1M journal rows, against SQLite's own `PRAGMA quick_check` of the
// same file. The database is a real one made by serve, then grown.
import { openSqliteStore } from "../../src/persistence/sqlite-store.ts";
import { startBenchServe } from "../lib/bench-serve.ts";
import type { BenchContext } from "../lib/context.ts";
import { quickCheckMs, seedTranscript } from "../lib/seed.ts";
import { type BenchRow, now, report, summary } from "../lib/stats.ts";

/** CPU time (user + system) of this process since `from`, in ms: what load on the machine hardly moves. */
const cpuSince = (from: NodeJS.CpuUsage) => { const c = process.cpuUsage(from); return (c.user + c.system) / 1000; };

function openMs(path: string, cpu: number[]): number {
  const c0 = process.cpuUsage();
  const t0 = now();
  const store = openSqliteStore({ path, lockWaitMs: 5_000 });
  const ms = now() - t0;
  cpu.push(cpuSince(c0));
  if (!store.ok) throw new Error(`startup validation refused the seeded database: ${store.error.code}`);
  store.value.close();
  return ms;
}

function quickMs(path: string, cpu: number[]): number {
  const c0 = process.cpuUsage();
  const ms = quickCheckMs(path);
  cpu.push(cpuSince(c0));
  return ms;
}

/** Runs row 7. */
export async function startupRows(ctx: BenchContext): Promise<BenchRow[]> {
  const sizes = ctx.quick ? [1_000, 10_000] : [10_000, 100_000, 1_000_000];
  const repeats = ctx.quick ? 2 : 5;
  const serve = await startBenchServe({ modelBaseUrl: "http://127.0.0.1:9/v1", runtime: ctx.runtime, groupCommitMax: ctx.groupCommitMax });
  const client = await serve.connect();
  const threadId = String((await client.createThread({ workspace: "ws0", provider: "codex" })).threadId);
  client.close();
  const path = serve.databasePath;
  const rows: BenchRow[] = [];
  try {
    // Everything below runs with serve stopped: the store is opened the way serve opens it.
    await serve.halt();
    let size = 0;
    for (const target of sizes) {
      size = seedTranscript(path, threadId, target - size);
      const v: number[] = [];
      const q: number[] = [];
      const vc: number[] = [];
      const qc: number[] = [];
      for (let i = 0; i < repeats; i++) { v.push(openMs(path, vc)); q.push(quickMs(path, qc)); }
      const vs = summary(v), qs = summary(q);
      const cpu = `CPU median ${summary(vc).median.toFixed(1)} ms vs quick_check ${summary(qc).median.toFixed(1)} ms (${(summary(vc).median / summary(qc).median).toFixed(2)}x)`;
      const label = target >= 1e6 ? `${target / 1e6}M` : `${target / 1000}k`;
      rows.push(report({ row: `startup @${label} rows`, figure: "startup validation, median", value: vs.median, baseline: qs.median, unit: "ms", goal: "<= 3x quick_check, linear", met: vs.median <= 3 * qs.median, note: `${((vs.median * 1e6) / size).toFixed(0)} ns/row; ${cpu}` }));
    }
    return rows;
  } finally {
    await serve.stop();
  }
}
