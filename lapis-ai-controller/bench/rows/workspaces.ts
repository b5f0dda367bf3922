// Row 4: 10 workspaces with 10 turns each, all submitted at once. The ideal
// makespan is the slowest single workspace's serial time in the same run (the
// sum of its turns' lease intervals): the controller should add no gaps and
// no cross-workspace serialization. Leases come from the owner journal; no
// two turns of one workspace may overlap.
import { DatabaseSync } from "node:sqlite";
import type { ControllerClient } from "../../src/client.ts";
import { startBenchServe } from "../lib/bench-serve.ts";
import { type BenchContext, FIXED_ANSWER, startFixedModel } from "../lib/context.ts";
import { awaitTerminal } from "../lib/controller-turns.ts";
import { type BenchRow, now, report } from "../lib/stats.ts";

type Lease = { turnId: string; kind: string; at: number };

function leases(path: string): Map<string, { start: number; end: number }> {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const rows = db.prepare("SELECT turn_id AS turnId, kind, created_at AS at FROM journal WHERE kind IN ('lease_acquired','lease_released') ORDER BY journal_id").all() as Lease[];
    const out = new Map<string, { start: number; end: number }>();
    for (const r of rows) {
      const cur = out.get(r.turnId) ?? { start: Number.NaN, end: Number.NaN };
      if (r.kind === "lease_acquired") cur.start = r.at; else cur.end = r.at;
      out.set(r.turnId, cur);
    }
    return out;
  } finally {
    db.close();
  }
}

async function runAll(client: ControllerClient, threads: string[], perWorkspace: number, push: () => void): Promise<{ ms: number; turnsByThread: Map<string, string[]> }> {
  const turnsByThread = new Map<string, string[]>();
  const t0 = now();
  for (let i = 0; i < perWorkspace; i++) {
    for (const threadId of threads) {
      push();
      const turnId = String((await client.submitTurn(threadId, { text: `turn ${i}` })).turnId);
      turnsByThread.set(threadId, [...(turnsByThread.get(threadId) ?? []), turnId]);
    }
  }
  for (const ids of turnsByThread.values()) for (const id of ids) {
    const turn = await awaitTerminal(client, id, 600_000);
    if (turn.state !== "completed") throw new Error(`turn ended ${String(turn.state)} ${String(turn.errorCode ?? turn.code ?? JSON.stringify(turn).slice(0, 300))}`);
  }
  return { ms: now() - t0, turnsByThread };
}

/** Runs row 4. */
export async function workspaceRows(ctx: BenchContext): Promise<BenchRow[]> {
  const count = ctx.quick ? 2 : 10;
  const perWorkspace = ctx.quick ? 2 : 10;
  const model = await startFixedModel();
  const serve = await startBenchServe({ modelBaseUrl: model.baseUrl, runtime: ctx.runtime, groupCommitMax: ctx.groupCommitMax, workspaceCount: count });
  const client = await serve.connect();
  try {
    const threads: string[] = [];
    for (const ws of serve.workspaces) threads.push(String((await client.createThread({ workspace: ws, provider: "codex" })).threadId));
    const push = () => model.push({ text: [...FIXED_ANSWER] });
    // Warm every workspace's agent session first, one at a time, so the figures count turns, not agent start-up.
    for (const threadId of threads) await runAll(client, [threadId], 1, push);
    const run = await runAll(client, threads, perWorkspace, push);
    const spans = leases(serve.databasePath);
    let slowest = 0;
    let overlaps = 0;
    for (const ids of run.turnsByThread.values()) {
      const iv = ids.map((id) => spans.get(id) ?? { start: Number.NaN, end: Number.NaN }).sort((a, b) => a.start - b.start);
      slowest = Math.max(slowest, iv.reduce((sum, x) => sum + (x.end - x.start), 0));
      for (let i = 1; i < iv.length; i++) if ((iv[i]?.start ?? 0) < (iv[i - 1]?.end ?? 0)) overlaps += 1;
    }
    return [report({ row: `${count} workspaces x ${perWorkspace}`, figure: "makespan vs slowest workspace serial", value: run.ms, baseline: slowest, unit: "ms", goal: "<= 1.1x, no overlap", met: run.ms <= 1.1 * slowest && overlaps === 0, note: `overlaps within a workspace: ${overlaps}` })];
  } finally {
    client.close();
    await serve.stop();
    await model.close();
  }
}
