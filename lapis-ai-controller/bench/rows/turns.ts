// Rows 1-2: submit -> first agent text, and submit -> completed, for one text
// turn through the controller against the same turn driven directly over ACP.
// Both sides keep one warm agent session and alternate turn by turn, so load
// on the shared machine hits both alike; the first turn of each is a warm-up.
import { startBenchServe } from "../lib/bench-serve.ts";
import { type BenchContext, FIXED_ANSWER, startFixedModel } from "../lib/context.ts";
import { watchedThread } from "../lib/controller-turns.ts";
import { durableCommitProbe, floorRows, hopProbe, middleHalf } from "../lib/floor.ts";
import { startDirectAgent } from "../../test/support/direct-acp-client.ts";
import { type BenchRow, report, summary } from "../lib/stats.ts";

/** Runs rows 1 and 2. */
export async function turnRows(ctx: BenchContext): Promise<BenchRow[]> {
  const turns = ctx.quick ? 3 : 30;
  const model = await startFixedModel();
  const serve = await startBenchServe({ modelBaseUrl: model.baseUrl, runtime: ctx.runtime, groupCommitMax: ctx.groupCommitMax });
  const direct = await startDirectAgent({ env: { ...serve.home.env, PATH: process.env.PATH ?? "" }, cwd: serve.home.workspace, modeId: "read-only" });
  const client = await serve.connect();
  const commit = durableCommitProbe(serve.dir);
  const hop = await hopProbe(ctx.runtime);
  try {
    const thread = await watchedThread(client, "ws0");
    const ctl = { first: [] as number[], done: [] as number[] };
    const dir = { first: [] as number[], done: [] as number[] };
    let cpu0 = 0;
    for (let i = 0; i <= turns; i++) {
      if (i === 1) cpu0 = serve.cpuMs();
      model.push({ text: [...FIXED_ANSWER] });
      const c = await thread.run(`Say hello (${i}).`);
      if (c.state !== "completed") throw new Error(`controller turn ended ${c.state}`);
      model.push({ text: [...FIXED_ANSWER] });
      const d = await direct.prompt(`Say hello (${i}).`);
      if (d.stopReason !== "end_turn") throw new Error(`direct turn stopped ${d.stopReason}`);
      if (i === 0) continue;
      commit.sample();
      await hop.sample();
      ctl.first.push(c.firstTextMs); ctl.done.push(c.doneMs);
      dir.first.push(d.firstTextMs); dir.done.push(d.doneMs);
    }
    const cpuPerTurn = (serve.cpuMs() - cpu0) / turns;
    const cf = summary(ctl.first), df = summary(dir.first), cd = summary(ctl.done), dd = summary(dir.done);
    return [
      report({ row: "first-event median", figure: `submit -> first agent text (n=${cf.n})`, value: cf.median, baseline: df.median, unit: "ms", goal: "<= baseline + 20 ms", met: cf.median <= df.median + 20 }),
      report({ row: "first-event p95", figure: "submit -> first agent text", value: cf.p95, baseline: df.p95, unit: "ms", goal: "<= 1.2x", met: cf.p95 <= 1.2 * df.p95 }),
      report({ row: "completed median", figure: `submit -> completed, text turn (n=${cd.n})`, value: cd.median, baseline: dd.median, unit: "ms", goal: "<= 1.05x", met: cd.median <= 1.05 * dd.median, note: `gap ${(cd.median - dd.median).toFixed(1)} ms; direct p25-p75 ${middleHalf(dir.done)}; serve CPU ${cpuPerTurn.toFixed(1)} ms/turn` }),
      ...floorRows(commit.samples, hop.samples, cd.median - dd.median, dd.median, "completed"),
    ];
  } finally {
    hop.close();
    commit.close();
    client.close();
    await direct.close();
    await serve.stop();
    await model.close();
  }
}
