// Row `memory-recall`: what recall (the memory endpoint's candidates, the
// render-time budget and the rendered block) adds to submit -> first agent
// text. Two threads on one serve, one with a memory endpoint answering eight
// candidates and one without, alternate turn by turn against the same fixed
// model, so load on the shared machine hits both alike.
import type { MemoryCandidate } from "../../src/client.ts";
import { startBenchServe } from "../lib/bench-serve.ts";
import { type BenchContext, FIXED_ANSWER, startFixedModel } from "../lib/context.ts";
import { watchedThread } from "../lib/controller-turns.ts";
import { type BenchRow, report, summary } from "../lib/stats.ts";

const SHA = "d".repeat(64);
const CANDIDATES: MemoryCandidate[] = Array.from({ length: 8 }, (_, i) => ({
  id: `bench-fact-${i}`, text: `Remembered fact number ${i}: ${"the build uses the pinned toolchain. ".repeat(5)}`, score: 8 - i,
  updatedAt: "2026-01-01T00:00:00Z", sources: [{ ref: `notes/fact-${i}.md`, sha256: SHA }], origin: "ingest",
}));

/** Runs the `memory-recall` row. */
export async function recallRows(ctx: BenchContext): Promise<BenchRow[]> {
  const turns = ctx.quick ? 3 : 30;
  const model = await startFixedModel();
  const serve = await startBenchServe({ modelBaseUrl: model.baseUrl, runtime: ctx.runtime, workspaceCount: 2 });
  const client = await serve.connect();
  try {
    const plain = await watchedThread(client, "ws0");
    const recalled = await watchedThread(client, "ws1");
    let asked = 0;
    await client.registerEndpoint({ endpointId: "bench-memory", kind: "memory", threadId: recalled.threadId, memory: { recall: () => { asked += 1; return CANDIDATES; } } });
    const withMemory: number[] = [];
    const without: number[] = [];
    for (let i = 0; i <= turns; i++) {
      model.push({ text: [...FIXED_ANSWER] });
      const m = await recalled.run(`Say hello (${i}).`);
      model.push({ text: [...FIXED_ANSWER] });
      const p = await plain.run(`Say hello (${i}).`);
      if (m.state !== "completed" || p.state !== "completed") throw new Error(`turns ended ${m.state}/${p.state}`);
      if (i === 0) continue;
      withMemory.push(m.firstTextMs);
      without.push(p.firstTextMs);
    }
    if (asked !== turns + 1) throw new Error(`recall asked ${asked} times`);
    const w = summary(withMemory), o = summary(without);
    return [
      report({ row: "memory-recall", figure: `submit -> first agent text with 8 recalled candidates (n=${w.n})`, value: w.median, baseline: o.median, unit: "ms", goal: "<= baseline + 10 ms", met: w.median <= o.median + 10 }),
    ];
  } finally {
    client.close();
    await serve.stop();
    await model.close();
  }
}
