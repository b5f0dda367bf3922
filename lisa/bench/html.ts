// html_to_markdown of a 2 MB HTML page through the real tool path, against
// the Pandoc command alone on the same file, interleaved A/B.
import { spawn } from "node:child_process";
import { mkdtempSync, openSync, closeSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { BOUNDS } from "../src/config/limits.ts";
import { PANDOC_ARGUMENTS, pandocMemoryArguments } from "../src/tools/pandoc.ts";
import { articlePage } from "./lib/html-page.ts";
import { distribution, fmtDist, interleave } from "./lib/stats.ts";
import type { BenchResult } from "./lib/types.ts";
import { spawnNode } from "./lib/world.ts";

/** Options of the conversion benchmark. */
export interface HtmlBenchOptions {
  readonly pageBytes: number;
  readonly rounds: number;
}

interface ChildReport {
  readonly ok: boolean;
  readonly code: string;
  readonly ms: number;
  readonly growth: number;
  readonly peakRss: number;
}

// Decimal megabytes, as the goals are written.
const MB = 1_000_000;

async function lisaConversion(pagePath: string): Promise<ChildReport> {
  const child = spawnNode(["--expose-gc", join(import.meta.dirname, "children/html-to-markdown.ts"), pagePath]);
  const code = await child.exited;
  const line = child.tail().trim().split("\n").at(-1) ?? "";
  if (code !== 0) throw new Error(`html_to_markdown child failed (${code}): ${child.tail()}`);
  const report = JSON.parse(line) as ChildReport;
  if (!report.ok) throw new Error(`html_to_markdown returned ${report.code}`);
  return report;
}

// The Pandoc command alone, as Lisa runs it (same heap cap, the default): stdin
// from the file, stdout discarded, peak RSS from GNU time (%M, KB).
function pandocAlone(pagePath: string): Promise<{ ms: number; peakRss: number }> {
  const input = openSync(pagePath, "r");
  const started = performance.now();
  const child = spawn("/usr/bin/time", ["-f", "%M", "pandoc", ...pandocMemoryArguments(BOUNDS["web.pandoc_max_memory_mb"].default), ...PANDOC_ARGUMENTS], { stdio: [input, "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      const ms = performance.now() - started;
      closeSync(input);
      const kilobytes = Number(stderr.trim().split("\n").at(-1));
      if (code !== 0 || !Number.isFinite(kilobytes)) reject(new Error(`pandoc failed (${code}): ${stderr.slice(-500)}`));
      else resolve({ ms, peakRss: kilobytes * 1024 });
    });
  });
}

/** Runs the benchmark. */
export async function benchHtml(options: HtmlBenchOptions): Promise<BenchResult> {
  const dir = mkdtempSync(join(tmpdir(), "lisa-bench-html-"));
  const pagePath = join(dir, "page.html");
  const html = articlePage(options.pageBytes);
  writeFileSync(pagePath, html);
  const pageBytes = Buffer.byteLength(html);
  try {
    const lisa: ChildReport[] = [];
    const alone: { ms: number; peakRss: number }[] = [];
    await interleave(options.rounds, async () => void lisa.push(await lisaConversion(pagePath)), async () => void alone.push(await pandocAlone(pagePath)));
    const lisaTime = distribution(lisa.map((r) => r.ms));
    const aloneTime = distribution(alone.map((r) => r.ms));
    const growth = distribution(lisa.map((r) => r.growth / MB));
    const pandocPeak = distribution(alone.map((r) => r.peakRss / MB));
    const timeRatio = lisaTime.median / aloneTime.median;
    const growthRatio = (growth.p95 * MB) / pageBytes;
    return {
      rows: [
        {
          figure: `html_to_markdown of a ${(pageBytes / MB).toFixed(2)} MB page: time`,
          value: fmtDist(lisaTime, "ms", 0), baseline: `pandoc alone ${fmtDist(aloneTime, "ms", 0)}`,
          ratio: timeRatio, goal: "<= 1.1x", met: timeRatio <= 1.1,
        },
        {
          figure: "html_to_markdown: peak RSS growth of Lisa's process (VmHWM)",
          value: fmtDist(growth, "MB"), baseline: `page ${(pageBytes / MB).toFixed(2)} MB (pandoc's own peak ${pandocPeak.median.toFixed(0)} MB)`,
          ratio: growthRatio, goal: "<= 3x the page size", met: growthRatio <= 3,
        },
      ],
      notes: [
        `html: the ratio of peak growth uses its p95 over the page size; Pandoc's own peak RSS (GNU time %M) is the same process in both paths and is not counted in Lisa's growth`,
        `html: p95 time ratio ${(lisaTime.p95 / aloneTime.p95).toFixed(2)}x`,
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
