// Row 7: startup validation (openSqliteStore: lock, schema check, every
// retained row validated, journal sequence, foreign keys, quick_check) at 10k,
// 100k and 1M journal rows, against SQLite's own `PRAGMA quick_check` of the
// same file. The database is a real one made by serve, then grown.
import { openSqliteStore } from "../../src/persistence/sqlite-store.ts";
import { startBenchServe } from "../lib/bench-serve.ts";
import type { BenchContext } from "../lib/context.ts";
import { quickCheckMs, seedTranscript } from "../lib/seed.ts";
import { type BenchRow, now, report, summary } from "../lib/stats.ts";

function openMs(path: string): number {
  const t0 = now();
  const store = openSqliteStore({ path, lockWaitMs: 5_000 });
  const ms = now() - t0;
  if (!store.ok) throw new Error(`startup validation refused the seeded database: ${store.error.code}`);
  store.value.close();
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
      for (let i = 0; i < repeats; i++) { v.push(openMs(path)); q.push(quickCheckMs(path)); }
      const vs = summary(v), qs = summary(q);
      const label = target >= 1e6 ? `${target / 1e6}M` : `${target / 1000}k`;
      rows.push(report({ row: `startup @${label} rows`, figure: "startup validation, median", value: vs.median, baseline: qs.median, unit: "ms", goal: "<= 3x quick_check, linear", met: vs.median <= 3 * qs.median, note: `${((vs.median * 1e6) / size).toFixed(0)} ns/row` }));
    }
    return rows;
  } finally {
    await serve.stop();
  }
}
