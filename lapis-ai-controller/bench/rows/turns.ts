// Rows 1-2: submit -> first agent text, and submit -> completed, for one text
// turn through the controller against the same turn driven directly over ACP.
// A third side, the relay floor (bench/children/relay-floor.ts: the direct
// client behind a second process with a durable journal, nothing of the
// controller's), runs in the same loop. The sides keep one warm agent session
// each and alternate turn by turn, the order rotating every turn, so load on
// the shared machine and the wake of the side before hit all alike; the first
// turn of each is a warm-up.
import { startBenchServe } from "../lib/bench-serve.ts";
import { type BenchContext, FIXED_ANSWER, startFixedModel } from "../lib/context.ts";
import { watchedThread } from "../lib/controller-turns.ts";
import { durableCommitProbe, floorRows, hopProbe, middleHalf } from "../lib/floor.ts";
import { perTurn, type RelayStats, relayRows, startRelayFloor } from "../lib/relay-floor.ts";
import { startDirectAgent } from "../../test/support/direct-acp-client.ts";
import { runRotated, sideTimes, timedSide } from "../lib/sides.ts";
import { type BenchRow, report, summary } from "../lib/stats.ts";

/** The bench process's CPU per turn of each side, medians: `x, direct y, relay z ms`. */
function benchCpuNote([ctl, dir, rel]: [number[], number[], number[]]): string {
  return `${summary(ctl).median.toFixed(1)}, direct ${summary(dir).median.toFixed(1)}, relay ${summary(rel).median.toFixed(1)} ms`;
}

/** Runs rows 1 and 2. */
export async function turnRows(ctx: BenchContext): Promise<BenchRow[]> {
  const turns = ctx.quick ? 3 : 30;
  const model = await startFixedModel();
  const serve = await startBenchServe({ modelBaseUrl: model.baseUrl, runtime: ctx.runtime, groupCommitMax: ctx.groupCommitMax });
  const agentEnv = { ...serve.home.env, PATH: process.env.PATH ?? "" };
  const direct = await startDirectAgent({ env: agentEnv, cwd: serve.home.workspace, modeId: "read-only" });
  const relay = await startRelayFloor({ runtime: ctx.runtime, executor: "acp", env: agentEnv, cwd: serve.home.workspace, dir: serve.dir }).catch(async (error: unknown) => { await direct.close(); await serve.stop(); await model.close(); throw error; });
  const client = await serve.connect();
  const commit = durableCommitProbe(serve.dir);
  const hop = await hopProbe(ctx.runtime);
  try {
    const thread = await watchedThread(client, "ws0");
    const ctl = sideTimes(), dir = sideTimes(), rel = sideTimes();
    // CPU time of this process (the model stand-in, and each side's client) while each side's turn ran, ms: controller, direct, relay.
    const benchCpu: [number[], number[], number[]] = [[], [], []];
    let cpu0 = 0, relayCpu0 = 0, relay0: RelayStats = { commits: 0, events: 0, commitMs: 0 };
    const answer = () => model.push({ text: [...FIXED_ANSWER] });
    for (let i = 0; i <= turns; i++) {
      if (i === 1) { cpu0 = serve.cpuMs(); relayCpu0 = relay.cpuMs(); relay0 = await relay.stats(); }
      const prompt = `Say hello (${i}).`;
      await runRotated(i, [
        timedSide(i, ctl, answer, "controller", "completed", async () => { const c = await thread.run(prompt); return { ...c, ended: c.state }; }),
        timedSide(i, dir, answer, "direct", "end_turn", async () => { const d = await direct.prompt(prompt); return { ...d, ended: d.stopReason }; }),
        timedSide(i, rel, answer, "relay", "completed", async () => { const r = await relay.run(prompt); return { ...r, ended: r.state }; }),
      ], benchCpu);
      if (i === 0) continue;
      commit.sample();
      await hop.sample();
    }
    const cpuPerTurn = (serve.cpuMs() - cpu0) / turns;
    const relayCpuPerTurn = (relay.cpuMs() - relayCpu0) / turns;
    const relay1 = await relay.stats();
    const cf = summary(ctl.first), df = summary(dir.first), cd = summary(ctl.done), dd = summary(dir.done);
    return [
      report({ row: "first-event median", figure: `submit -> first agent text (n=${cf.n})`, value: cf.median, baseline: df.median, unit: "ms", goal: "<= baseline + 20 ms", met: cf.median <= df.median + 20 }),
      report({ row: "first-event p95", figure: "submit -> first agent text", value: cf.p95, baseline: df.p95, unit: "ms", goal: "<= 1.2x", met: cf.p95 <= 1.2 * df.p95 }),
      report({ row: "completed median", figure: `submit -> completed, text turn (n=${cd.n})`, value: cd.median, baseline: dd.median, unit: "ms", goal: "<= 1.05x", met: cd.median <= 1.05 * dd.median, note: `gap ${(cd.median - dd.median).toFixed(1)} ms; direct p25-p75 ${middleHalf(dir.done)}; serve CPU ${cpuPerTurn.toFixed(1)} ms/turn; bench process CPU per turn (median; the model stand-in and the side's client) controller ${benchCpuNote(benchCpu)}` }),
      ...floorRows(commit.samples, hop.samples, cd.median - dd.median, dd.median, "completed"),
      ...relayRows({ what: "ACP", direct: dir.done, relay: rel.done, directFirst: dir.first, relayFirst: rel.first, controller: ctl.done, relayCpuPerTurn,
        relayPerTurn: perTurn(relay0, relay1, turns) }),
    ];
  } finally {
    hop.close();
    commit.close();
    client.close();
    await relay.close();
    await direct.close();
    await serve.stop();
    await model.close();
  }
}
