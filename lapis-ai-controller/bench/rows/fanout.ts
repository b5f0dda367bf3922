// Row 6: one turn's events fanned out to 1, 10 and 100 subscribed clients.
// Per-event delivery = receipt time at a client minus the event's own
// createdAt (the serve clock, milliseconds); p95 over every (event, client)
// pair. The baseline is the 1-subscriber case of the same run.
import type { ControllerClient } from "../../src/client.ts";
import { startBenchServe } from "../lib/bench-serve.ts";
import { type BenchContext, startFixedModel } from "../lib/context.ts";
import { awaitTerminal } from "../lib/controller-turns.ts";
import { type BenchRow, report, summary } from "../lib/stats.ts";

const CHUNKS = 200;
const wallNow = (): number => performance.timeOrigin + performance.now();

/** Runs row 6. */
export async function fanoutRows(ctx: BenchContext): Promise<BenchRow[]> {
  const counts = ctx.quick ? [1, 10] : [1, 10, 100];
  const model = await startFixedModel();
  const serve = await startBenchServe({ modelBaseUrl: model.baseUrl, runtime: ctx.runtime, groupCommitMax: ctx.groupCommitMax });
  const owner = await serve.connect();
  const results = new Map<number, { median: number; p95: number; n: number }>();
  const clients: ControllerClient[] = [];
  try {
    const threadId = String((await owner.createThread({ workspace: "ws0", provider: "codex" })).threadId);
    // A warm-up turn starts the agent session, so every measured turn streams from a live agent.
    model.push({ text: ["warm"] });
    await awaitTerminal(owner, String((await owner.submitTurn(threadId, { text: "warm up" })).turnId), 120_000);
    for (const n of counts) {
      const snapshot = (await owner.call("threads.snapshot", { threadId })) as { lastSeq?: number };
      const afterSeq = Number(snapshot.lastSeq ?? 0);
      const delays: number[] = [];
      for (let i = 0; i < n; i++) {
        const c = await serve.connect();
        clients.push(c);
        await c.subscribe(threadId, {
          event(d) {
            const created = Number(d.event.createdAt);
            if (d.seq > afterSeq && Number.isFinite(created)) delays.push(wallNow() - created);
          },
        }, afterSeq);
      }
      model.push({ text: Array.from({ length: CHUNKS }, (_, i) => `word${i} `) });
      const turnId = String((await owner.submitTurn(threadId, { text: `stream to ${n}` })).turnId);
      await awaitTerminal(owner, turnId, 120_000);
      // Let the last deliveries land before the subscribers go.
      await new Promise((r) => setTimeout(r, 500));
      for (const c of clients.splice(0)) c.close();
      results.set(n, summary(delays));
    }
  } finally {
    for (const c of clients) c.close();
    owner.close();
    await serve.stop();
    await model.close();
  }
  const base = results.get(1) as { median: number; p95: number; n: number };
  const top = results.get(counts.at(-1) as number) as { median: number; p95: number; n: number };
  const trend = counts.map((n) => `${n}: p95 ${(results.get(n)?.p95 ?? Number.NaN).toFixed(1)} ms (${results.get(n)?.n ?? 0} deliveries)`).join(", ");
  return [report({ row: `fan-out @${counts.at(-1)} subscribers`, figure: "per-event delivery p95", value: top.p95, baseline: base.p95, unit: "ms", goal: "<= 2x the 1-subscriber p95", met: top.p95 <= 2 * base.p95, note: trend })];
}
