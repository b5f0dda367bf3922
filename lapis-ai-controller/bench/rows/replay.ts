// Row 5: one replay page (100 events, from the start of the thread) through
// `threads.replay` of a running serve, in threads of 1k, 10k and 100k events.
// The baseline is the 1k case of the same run: a page must cost the same
// however long the thread is.
import { startBenchServe } from "../lib/bench-serve.ts";
import type { BenchContext } from "../lib/context.ts";
import { seedTranscript } from "../lib/seed.ts";
import { type BenchRow, now, report, summary } from "../lib/stats.ts";

const PAGE = 100;

/** Runs row 5. */
export async function replayRows(ctx: BenchContext): Promise<BenchRow[]> {
  const sizes = ctx.quick ? [1_000, 10_000] : [1_000, 10_000, 100_000];
  const reads = ctx.quick ? 10 : 40;
  // Replay never reaches the agent: this model URL is never called.
  const serve = await startBenchServe({ modelBaseUrl: "http://127.0.0.1:9/v1", runtime: ctx.runtime, groupCommitMax: ctx.groupCommitMax });
  const pages = new Map<number, { median: number; p95: number }>();
  try {
    const setup = await serve.connect();
    const threadId = String((await setup.createThread({ workspace: "ws0", provider: "codex" })).threadId);
    setup.close();
    let size = 0;
    for (const target of sizes) {
      await serve.restart(() => { size = seedTranscript(serve.databasePath, threadId, target - size); });
      const client = await serve.connect();
      const times: number[] = [];
      for (let i = 0; i < reads; i++) {
        const t0 = now();
        const page = (await client.call("threads.replay", { threadId, afterSeq: 0, limit: PAGE })) as { events: unknown[] };
        times.push(now() - t0);
        if (page.events.length !== PAGE) throw new Error(`replay page of ${page.events.length}`);
      }
      client.close();
      const s = summary(times.slice(2));
      pages.set(target, { median: s.median, p95: s.p95 });
    }
  } finally {
    await serve.stop();
  }
  const base = pages.get(sizes[0] as number) as { median: number; p95: number };
  const largest = sizes.at(-1) as number;
  const top = pages.get(largest) as { median: number; p95: number };
  const trend = sizes.map((n) => `${n / 1000}k ${(pages.get(n)?.median ?? Number.NaN).toFixed(2)} ms`).join(", ");
  return [report({ row: `replay page @${largest / 1000}k`, figure: `one page of ${PAGE} events, median`, value: top.median, baseline: base.median, unit: "ms", goal: "<= 1.2x the 1k case", met: top.median <= 1.2 * base.median, note: `${trend}; p95 ${top.p95.toFixed(2)} vs ${base.p95.toFixed(2)}` })];
}
