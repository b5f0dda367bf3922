// Row 3: the approval round trip. The scripted model answers a turn with a
// command that needs approval; Codex asks, the application answers "allow"
// at once, Codex runs the command and sends the result back to the model.
// Measured at the model server (one clock for both sides): from the request
// that received the call to the follow-up request that carries its result.
// The baseline is the same with a minimal ACP client answering itself.
import { join } from "node:path";
import type { ControllerClient } from "../../src/client.ts";
import { startDirectAgent } from "../../test/support/direct-acp-client.ts";
import { startBenchServe } from "../lib/bench-serve.ts";
import { type BenchContext, FIXED_ANSWER, startFixedModel } from "../lib/context.ts";
import { awaitTerminal } from "../lib/controller-turns.ts";
import { type BenchRow, now, report, summary } from "../lib/stats.ts";

type Interaction = { readonly interactionId: string; readonly optionIds: readonly string[] };

/** Waits for the turn's `interaction_requested` event on the thread's subscription, then reads its options. */
async function pendingInteraction(client: ControllerClient, requested: Map<string, string>, turnId: string, deadlineMs: number): Promise<Interaction> {
  const end = Date.now() + deadlineMs;
  while (!requested.has(turnId)) {
    if (Date.now() > end) throw new Error("no interaction_requested event");
    await new Promise((r) => setTimeout(r, 1));
  }
  const id = requested.get(turnId);
  const open = (await client.turns.get(turnId)).interactions.find((i) => i.interactionId === id);
  if (open === undefined) throw new Error("requested interaction not in turns.get");
  return open;
}

function escalated(file: string) {
  return { call: { name: "exec_command", arguments: { cmd: `touch ${file}`, sandbox_permissions: "require_escalated", justification: "bench" } } };
}

/** Runs row 3. */
export async function approvalRows(ctx: BenchContext): Promise<BenchRow[]> {
  const rounds = ctx.quick ? 2 : 20;
  const arrivals: number[] = [];
  const model = await startFixedModel({ onRequest: () => arrivals.push(now()) });
  const serve = await startBenchServe({ modelBaseUrl: model.baseUrl, runtime: ctx.runtime, groupCommitMax: ctx.groupCommitMax });
  const direct = await startDirectAgent({ env: { ...serve.home.env, PATH: process.env.PATH ?? "" }, cwd: serve.home.workspace, modeId: "read-only" });
  direct.onPermission = (options) => options.find((o) => o.kind === "allow_once")?.optionId ?? options[0]?.optionId ?? "";
  const client = await serve.connect();
  const ws = join(serve.dir, "workspaces", "ws0");
  try {
    const threadId = String((await client.createThread({ workspace: "ws0", provider: "codex" })).threadId);
    const requested = new Map<string, string>();
    await client.subscribe(threadId, { event(d) { if (d.event.kind === "interaction_requested") requested.set(String(d.event.turnId), String(d.event.metadata.interactionId)); } });
    const ctl: number[] = [];
    const dir: number[] = [];
    for (let i = 0; i <= rounds; i++) {
      model.push(escalated(join(ws, `ctl-${i}.txt`)), { text: [...FIXED_ANSWER] });
      let first = arrivals.length;
      const turnId = String((await client.submitTurn(threadId, { text: `Create file ${i}.` })).turnId);
      const ask = await pendingInteraction(client, requested, turnId, 60_000);
      const allow = ask.optionIds.find((id) => /approved$|allow/.test(id)) ?? ask.optionIds[0] ?? "";
      await client.interactions.respond(turnId, ask.interactionId, allow);
      const turn = await awaitTerminal(client, turnId, 60_000);
      if (turn.state !== "completed") throw new Error(`approval turn ended ${String(turn.state)}`);
      const ctlTrip = (arrivals[first + 1] ?? Number.NaN) - (arrivals[first] ?? Number.NaN);

      model.push(escalated(join(serve.home.workspace, `direct-${i}.txt`)), { text: [...FIXED_ANSWER] });
      first = arrivals.length;
      const d = await direct.prompt(`Create file ${i}.`);
      if (d.stopReason !== "end_turn") throw new Error(`direct approval turn stopped ${d.stopReason}`);
      const dirTrip = (arrivals[first + 1] ?? Number.NaN) - (arrivals[first] ?? Number.NaN);
      if (i === 0) continue;
      ctl.push(ctlTrip);
      dir.push(dirTrip);
    }
    const c = summary(ctl), d = summary(dir);
    return [report({ row: "approval round trip", figure: `agent asks -> app answers -> resumes (n=${c.n})`, value: c.median, baseline: d.median, unit: "ms", goal: "<= baseline + 10 ms", met: c.median <= d.median + 10, note: `p95 ${c.p95.toFixed(1)} vs ${d.p95.toFixed(1)}` })];
  } finally {
    client.close();
    await direct.close();
    await serve.stop();
    await model.close();
  }
}
