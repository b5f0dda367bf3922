// Native rows: submit -> first agent text and submit -> completed for one text
// turn through the controller with provider `codex` on the native executor
// (`kind: "codex-app-server"`), against the same turn driven directly over
// `codex app-server` by a minimal client. Both keep one warm thread and
// alternate turn by turn, the order rotating every turn; the first turn of
// each is a warm-up. A third side, the controller on the ACP executor, runs
// in the same loop so the two executors are compared under the same load
// (the demo's default follows it), and a fourth, the relay floor on the
// app-server (bench/children/relay-floor.ts: the direct client behind a
// second process with a durable journal, nothing of the controller's).
import { startBenchServe } from "../lib/bench-serve.ts";
import { type BenchContext, FIXED_ANSWER, startFixedModel } from "../lib/context.ts";
import { watchedThread } from "../lib/controller-turns.ts";
import { durableCommitProbe, floorRows, hopProbe, middleHalf } from "../lib/floor.ts";
import { perTurn, type RelayStats, relayRows, startRelayFloor } from "../lib/relay-floor.ts";
import { startDirectAppServer } from "../../test/support/direct-app-server-client.ts";
import { runRotated, sideTimes, timedSide } from "../lib/sides.ts";
import { type BenchRow, report, summary } from "../lib/stats.ts";

/** Runs the native rows. */
export async function nativeRows(ctx: BenchContext): Promise<BenchRow[]> {
  const turns = ctx.quick ? 3 : 30;
  const model = await startFixedModel();
  const native = await startBenchServe({ modelBaseUrl: model.baseUrl, runtime: ctx.runtime, executor: "native" });
  const acp = await startBenchServe({ modelBaseUrl: model.baseUrl, runtime: ctx.runtime, executor: "acp" });
  const agentEnv = { ...native.home.env, PATH: process.env.PATH ?? "" };
  const direct = await startDirectAppServer({ env: agentEnv, cwd: native.home.workspace });
  const relay = await startRelayFloor({ runtime: ctx.runtime, executor: "native", env: agentEnv, cwd: native.home.workspace, dir: native.dir }).catch(async (error: unknown) => { await direct.close(); await native.stop(); await acp.stop(); await model.close(); throw error; });
  const nativeClient = await native.connect();
  const acpClient = await acp.connect();
  const commit = durableCommitProbe(native.dir);
  const hop = await hopProbe(ctx.runtime);
  try {
    const nThread = await watchedThread(nativeClient, "ws0");
    const aThread = await watchedThread(acpClient, "ws0");
    const ctl = sideTimes(), dir = sideTimes(), viaAcp = sideTimes(), rel = sideTimes();
    const answer = () => model.push({ text: [...FIXED_ANSWER] });
    let cpu0 = 0, acpCpu0 = 0, relayCpu0 = 0, relay0: RelayStats = { commits: 0, events: 0, commitMs: 0 };
    for (let i = 0; i <= turns; i++) {
      if (i === 1) { cpu0 = native.cpuMs(); acpCpu0 = acp.cpuMs(); relayCpu0 = relay.cpuMs(); relay0 = await relay.stats(); }
      const prompt = `Say hello (${i}).`;
      await runRotated(i, [
        timedSide(i, ctl, answer, "native controller", "completed", async () => { const c = await nThread.run(prompt); return { ...c, ended: c.state }; }),
        timedSide(i, dir, answer, "direct", "completed", async () => { const d = await direct.turn(prompt); return { ...d, ended: d.status }; }),
        timedSide(i, rel, answer, "relay", "completed", async () => { const r = await relay.run(prompt); return { ...r, ended: r.state }; }),
        timedSide(i, viaAcp, answer, "acp controller", "completed", async () => { const x = await aThread.run(prompt); return { ...x, ended: x.state }; }),
      ]);
      if (i === 0) continue;
      commit.sample();
      await hop.sample();
    }
    const relayCpuPerTurn = (relay.cpuMs() - relayCpu0) / turns;
    const relay1 = await relay.stats();
    const cpuPerTurn = (native.cpuMs() - cpu0) / turns, acpCpuPerTurn = (acp.cpuMs() - acpCpu0) / turns;
    const cf = summary(ctl.first), df = summary(dir.first), cd = summary(ctl.done), dd = summary(dir.done), af = summary(viaAcp.first), ad = summary(viaAcp.done);
    return [
      report({ row: "native first-event med", figure: `submit -> first agent text (n=${cf.n})`, value: cf.median, baseline: df.median, unit: "ms", goal: "<= baseline + 20 ms", met: cf.median <= df.median + 20, note: "baseline: direct app-server client" }),
      report({ row: "native first-event p95", figure: "submit -> first agent text", value: cf.p95, baseline: df.p95, unit: "ms", goal: "<= 1.2x", met: cf.p95 <= 1.2 * df.p95 }),
      report({ row: "native completed med", figure: `submit -> completed, text turn (n=${cd.n})`, value: cd.median, baseline: dd.median, unit: "ms", goal: "<= 1.05x", met: cd.median <= 1.05 * dd.median, note: `gap ${(cd.median - dd.median).toFixed(1)} ms; direct p25-p75 ${middleHalf(dir.done)}; serve CPU ${cpuPerTurn.toFixed(1)} ms/turn` }),
      report({ row: "native vs acp first", figure: "controller first text, native vs ACP", value: cf.median, baseline: af.median, unit: "ms", goal: "<= 1.0x (demo default)", met: cf.median <= af.median }),
      report({ row: "native vs acp completed", figure: "controller completed, native vs ACP", value: cd.median, baseline: ad.median, unit: "ms", goal: "<= 1.0x (demo default)", met: cd.median <= ad.median, note: `serve CPU native ${cpuPerTurn.toFixed(1)}, ACP ${acpCpuPerTurn.toFixed(1)} ms/turn` }),
      ...floorRows(commit.samples, hop.samples, cd.median - dd.median, dd.median, "native completed"),
      ...relayRows({ what: "native", direct: dir.done, relay: rel.done, directFirst: dir.first, relayFirst: rel.first, controller: ctl.done, relayCpuPerTurn,
        relayPerTurn: perTurn(relay0, relay1, turns) }),
    ];
  } finally {
    hop.close();
    commit.close();
    nativeClient.close();
    acpClient.close();
    await relay.close();
    await direct.close();
    await native.stop();
    await acp.stop();
    await model.close();
  }
}
