// Row 7: startup validation (openSqliteStore: lock, schema check, every
// retained row validated, journal sequence, foreign keys, quick_check) at 10k,
// 100k and 1M journal rows, against SQLite's own `PRAGMA quick_check` of the
// same file. The database is a real one made by serve, then grown the way
// real turns grow it: every row names its turn, and each turn of ROWS_PER_TURN
// rows has its turn row, its `turns.submit` receipt and its preparation
// marker (bench/lib/seed.ts), which startup validates too. Each size
// also prints the floor measured in the same run: the same open without any
// validation (the instance lock, the connection and its settings, the schema
// read), which every open pays whatever it validates; at 10k rows it is a
// sizeable part of the 3x a 3-4 ms quick_check allows.
import { DatabaseSync } from "node:sqlite";
import { acquireInstanceLock } from "../../src/persistence/instance-lock.ts";
import { configureConnection, openSqliteStore, readSchemaVersion } from "../../src/persistence/sqlite-store.ts";
import { startBenchServe } from "../lib/bench-serve.ts";
import type { BenchContext } from "../lib/context.ts";
import { quickCheckMs, seedTranscript } from "../lib/seed.ts";
import { type BenchRow, now, report, summary } from "../lib/stats.ts";

/** Journal rows per turn: 18, an ACP turn's rows in the per-turn trace of docs/performance.md. */
const ROWS_PER_TURN = 18;

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

/** The floor: openSqliteStore's open without validation (lock, connection, settings, schema read), timed as openMs times the open. */
function floorMs(path: string, cpu: number[]): number {
  const c0 = process.cpuUsage();
  const t0 = now();
  const lock = acquireInstanceLock(path, 5_000);
  if (!lock.ok) throw new Error(`the floor could not take the instance lock: ${lock.error.code}`);
  const db = new DatabaseSync(path, { timeout: 1_000 });
  configureConnection(db, true);
  const version = readSchemaVersion(db);
  const ms = now() - t0;
  cpu.push(cpuSince(c0));
  db.close();
  lock.value.release();
  if (version === undefined) throw new Error("the floor found no schema");
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
      size = seedTranscript(path, threadId, target - size, { rowsPerTurn: ROWS_PER_TURN });
      const v: number[] = [];
      const q: number[] = [];
      const vc: number[] = [];
      const qc: number[] = [];
      const f: number[] = [];
      const fc: number[] = [];
      for (let i = 0; i < repeats; i++) { v.push(openMs(path, vc)); q.push(quickMs(path, qc)); f.push(floorMs(path, fc)); }
      const vs = summary(v), qs = summary(q), fs = summary(f);
      const floor = `floor (the same open without validation: lock, settings, schema read) ${fs.median.toFixed(2)} ms = ${(fs.median / qs.median).toFixed(2)}x quick_check, CPU ${summary(fc).median.toFixed(2)} ms`;
      const cpu = `CPU median ${summary(vc).median.toFixed(1)} ms vs quick_check ${summary(qc).median.toFixed(1)} ms (${(summary(vc).median / summary(qc).median).toFixed(2)}x); ${floor}`;
      const label = target >= 1e6 ? `${target / 1e6}M` : `${target / 1000}k`;
      rows.push(report({ row: `startup @${label} rows`, figure: "startup validation, median", value: vs.median, baseline: qs.median, unit: "ms", goal: "<= 3x quick_check, linear", met: vs.median <= 3 * qs.median, note: `${((vs.median * 1e6) / size).toFixed(0)} ns/row; ${cpu}` }));
    }
    return rows;
  } finally {
    await serve.stop();
  }
}
