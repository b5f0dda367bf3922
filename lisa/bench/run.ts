// `npm run bench`: every benchmark of Lisa's own costs against a baseline
// measured in the same run, on this machine, against the local fakes.
// Prints one Markdown table (figure, baseline, ratio, goal) and notes.
//   node bench/run.ts [--only=a,b] [--quick] [--runs=N] [--invocations=N] [--json=FILE]
// --runs: independent memory runs whose medians are reported (default 5, --quick 2);
// --invocations: invocations per memory run (default 1,000, --quick 300).
// Operator knobs in the environment (MALLOC_ARENA_MAX, NODE_OPTIONS, ... see
// bench/lib/world.ts) are passed to every child alike.
// Benchmarks are never timed assertions in tests: this only reports.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { benchBurst } from "./burst.ts";
import { benchE2ee } from "./e2ee.ts";
import { benchFootprint } from "./footprint.ts";
import { benchHtml } from "./html.ts";
import { benchInvocation } from "./invocation.ts";
import { buildDist, type DistBuild } from "./lib/dist.ts";
import { HttpObserver } from "./lib/observe.ts";
import { markdownTable, type ReportRow } from "./lib/stats.ts";
import type { Benchmark, BenchResult } from "./lib/types.ts";
import { benchMemory } from "./memory.ts";
import { benchPrompt } from "./prompt.ts";
import { benchStartup } from "./startup.ts";
import { benchStream } from "./stream.ts";

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => args.find((a) => a === `--${name}` || a.startsWith(`--${name}=`))?.split("=").slice(1).join("=");
const has = (name: string): boolean => args.some((a) => a === `--${name}` || a.startsWith(`--${name}=`));
const quick = has("quick");
const only = flag("only")?.split(",").filter((n) => n !== "") ?? null;
const jsonPath = flag("json");
const positive = (name: string, fallback: number): number => {
  const value = Number(flag(name) ?? fallback);
  return Number.isInteger(value) && value > 0 && value <= 10_000 ? value : fallback;
};
const memoryRuns = positive("runs", quick ? 2 : 5);
const memoryInvocations = positive("invocations", quick ? 300 : 1_000);

const observer = new HttpObserver();
let dist: DistBuild | null = null;
const distEntry = (): string => {
  dist ??= buildDist();
  return dist.entry;
};

const BENCHMARKS: readonly Benchmark[] = [
  {
    name: "prompt",
    run: () => benchPrompt({ history: 60, limits: { max_events: 40, max_characters: 24_000, max_event_characters: 4_000, max_reply_depth: 2 } }),
  },
  { name: "startup", run: () => benchStartup(observer, { rounds: quick ? 4 : 12, distEntry: distEntry() }) },
  { name: "invocation", run: () => benchInvocation(observer, { warmup: quick ? 10 : 30, samples: quick ? 40 : 200, history: 60, distEntry: distEntry() }) },
  { name: "footprint", run: () => benchFootprint({ rounds: quick ? 1 : 3 }) },
  {
    name: "memory",
    run: () => benchMemory(observer, { invocations: memoryInvocations, rooms: 10, settleMs: 2_000, distEntry: distEntry(), runs: memoryRuns }),
  },
  {
    name: "burst",
    run: () => benchBurst(observer, { rooms: 20, perRoom: 10, llmDelayMs: 200, maxConcurrentRooms: 3, repetitions: quick ? 1 : 3 }),
  },
  // Encrypted rooms' cost (LISA-E2EE): E2EE off and on in the same run.
  { name: "e2ee", run: () => benchE2ee(observer, { invocations: memoryInvocations, rooms: 10, settleMs: 2_000, distEntry: distEntry() }) },
  { name: "stream", run: () => benchStream(observer, { samples: quick ? 4 : 12, tokenMs: 50 }) },
  // 2 MB = web.max_download_bytes' default (2,000,000): the largest page fetch_web_page stores.
  { name: "html", run: () => benchHtml({ pageBytes: 2_000_000, rounds: quick ? 2 : 6 }) },
];

function machine(): string {
  let pandoc = "pandoc ?";
  try {
    pandoc = execFileSync("pandoc", ["--version"], { encoding: "utf8" }).split("\n")[0] ?? pandoc;
  } catch {
    pandoc = "pandoc missing";
  }
  const load = loadavg().map((l) => l.toFixed(2)).join(" ");
  return `node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${pandoc}, load average ${load}, ${new Date().toISOString()}`;
}

async function main(): Promise<number> {
  const selected = BENCHMARKS.filter((b) => only === null || only.includes(b.name));
  if (selected.length === 0) {
    process.stderr.write(`unknown benchmark; choose from ${BENCHMARKS.map((b) => b.name).join(", ")}\n`);
    return 2;
  }
  const results: { name: string; result: BenchResult; seconds: number }[] = [];
  const started = Date.now();
  const before = machine();
  try {
    for (const benchmark of selected) {
      process.stderr.write(`bench: ${benchmark.name} ...\n`);
      const t0 = Date.now();
      observer.clear();
      const result = await benchmark.run().catch((error: unknown): BenchResult => ({
        rows: [{ figure: benchmark.name, value: "FAILED", baseline: "-", ratio: Number.NaN, goal: "-", met: false }],
        notes: [`${benchmark.name}: failed: ${error instanceof Error ? error.message : String(error)}`],
      }));
      results.push({ name: benchmark.name, result, seconds: (Date.now() - t0) / 1000 });
      process.stderr.write(`bench: ${benchmark.name} done in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
    }
  } finally {
    observer.close();
    dist?.remove();
  }
  const rows: ReportRow[] = results.flatMap((r) => r.result.rows);
  const lines = [
    `- Machine at start: ${before}${quick ? " (--quick)" : ""}`,
    `- Machine at end: ${machine()}`,
    "",
    markdownTable(rows),
    "",
    ...results.flatMap((r) => r.result.notes.map((n) => `- ${n}`)),
    `- total: ${((Date.now() - started) / 1000).toFixed(0)} s (${results.map((r) => `${r.name} ${r.seconds.toFixed(0)} s`).join(", ")})`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  if (jsonPath !== undefined) writeFileSync(jsonPath, JSON.stringify({ machine: before, results }, null, 2));
  return 0;
}

process.exitCode = await main();
