// Row `memory-recall`: what recall (the memory endpoint's candidates, the
// render-time budget and the rendered block) adds to submit -> first agent
// text. Four threads on one serve alternate turn by turn against the same
// fixed model, so load on the shared machine hits all alike:
// - plain: no endpoint (the baseline);
// - recalled: a memory endpoint answering eight candidates (the figure);
// - empty recall: a memory endpoint answering none (the endpoint round trip
//   and the recall record, nothing rendered);
// - same text as context: a context endpoint answering the very block recall
//   renders (one round trip, and what a prompt that much longer costs the
//   agent and its model). That is the floor of recalling that text at all: it
//   is printed beside the figure, and recall's own cost is what lies above it.
import type { MemoryCandidate } from "../../src/client.ts";
import { enforceMemoryBudget, MEMORY_LIMIT_DEFAULTS, threadBudget } from "../../src/domain/memory-budget.ts";
import { rankCandidates } from "../../src/domain/memory-candidates.ts";
import { startBenchServe } from "../lib/bench-serve.ts";
import { type BenchContext, FIXED_ANSWER, startFixedModel } from "../lib/context.ts";
import { watchedThread } from "../lib/controller-turns.ts";
import { type BenchRow, report, summary } from "../lib/stats.ts";

const SHA = "d".repeat(64);
const CANDIDATES: MemoryCandidate[] = Array.from({ length: 8 }, (_, i) => ({
  id: `bench-fact-${i}`, text: `Remembered fact number ${i}: ${"the build uses the pinned toolchain. ".repeat(5)}`, score: 8 - i,
  updatedAt: "2026-01-01T00:00:00Z", sources: [{ ref: `notes/fact-${i}.md`, sha256: SHA }], origin: "ingest",
}));

/** The block recall renders of CANDIDATES under serve's default budget (the context thread's answer). */
const RENDERED = enforceMemoryBudget(rankCandidates(CANDIDATES), threadBudget({}, MEMORY_LIMIT_DEFAULTS)).text ?? "";

const fmt = (ms: number) => `${ms >= 0 ? "+" : ""}${ms.toFixed(1)} ms`;

/** Runs the `memory-recall` row. */
export async function recallRows(ctx: BenchContext): Promise<BenchRow[]> {
  const turns = ctx.quick ? 3 : 30;
  const model = await startFixedModel();
  const serve = await startBenchServe({ modelBaseUrl: model.baseUrl, runtime: ctx.runtime, workspaceCount: 4 });
  const client = await serve.connect();
  try {
    if (RENDERED === "") throw new Error("the candidates render to nothing");
    const plain = await watchedThread(client, "ws0");
    const recalled = await watchedThread(client, "ws1");
    const empty = await watchedThread(client, "ws2");
    const contextId = await client.reserveThread();
    let asked = 0;
    let contexts = 0;
    await client.registerEndpoint({ endpointId: "bench-memory", kind: "memory", threadId: recalled.threadId, memory: { recall: () => { asked += 1; return CANDIDATES; } } });
    await client.registerEndpoint({ endpointId: "bench-memory-empty", kind: "memory", threadId: empty.threadId, memory: { recall: () => [] } });
    await client.registerEndpoint({ endpointId: "bench-context", kind: "context", threadId: contextId, context: () => { contexts += 1; return { context: RENDERED }; } });
    const asContext = await watchedThread(client, "ws3", { threadId: contextId, binding: { contextSources: ["bench-context"] } });
    const series = { recalled: [] as number[], plain: [] as number[], empty: [] as number[], context: [] as number[] };
    // serve's own CPU time (all its threads, not its agents) spent on each kind of turn, a figure load hardly moves.
    const cpu = { recalled: 0, plain: 0, empty: 0, context: 0 };
    const threads = [["recalled", recalled], ["plain", plain], ["empty", empty], ["context", asContext]] as const;
    for (let i = 0; i <= turns; i++) {
      for (const [name, thread] of threads) {
        model.push({ text: [...FIXED_ANSWER] });
        const cpu0 = serve.cpuMs();
        const turn = await thread.run(`Say hello (${i}).`);
        if (turn.state !== "completed") throw new Error(`${name} turn ended ${turn.state}`);
        if (i === 0) continue;
        series[name].push(turn.firstTextMs);
        cpu[name] += serve.cpuMs() - cpu0;
      }
    }
    if (asked !== turns + 1 || contexts !== turns + 1) throw new Error(`recall asked ${asked} times, context ${contexts} times`);
    const w = summary(series.recalled), o = summary(series.plain), e = summary(series.empty), c = summary(series.context);
    const floor = c.median - o.median;
    const perTurn = (name: keyof typeof cpu) => (cpu[name] - cpu.plain) / turns;
    return [
      report({
        row: "memory-recall", figure: `submit -> first agent text with 8 recalled candidates (n=${w.n})`, value: w.median, baseline: o.median, unit: "ms",
        goal: "<= baseline + 10 ms", met: w.median <= o.median + 10,
        note: `recall ${fmt(w.median - o.median)}; floor: the same ${RENDERED.length}-char block from a context endpoint ${fmt(floor)} (recall above it ${fmt(w.median - c.median)}); an empty recall ${fmt(e.median - o.median)}; serve CPU per turn beyond plain: recall ${fmt(perTurn("recalled"))}, empty recall ${fmt(perTurn("empty"))}, context ${fmt(perTurn("context"))}`,
      }),
    ];
  } finally {
    client.close();
    await serve.stop();
    await model.close();
  }
}
