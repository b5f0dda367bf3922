// Chaos run, black-box through the SDK against `serve` with the scripted ACP
// agent: at least 50 turns over 3 workspaces with at least 10 SIGKILLs of the
// service. Proves no turn executed twice, none lost without an explicit
// terminal or fenced state, and no overlap of two turns on one workspace in
// the journal (P-ARC-14, P-ARC-17, P-TRN-04/06, P-TRN-28). Prints the counts.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ClientError, type ControllerClient } from "../../src/client.ts";
import { createPrng } from "../support/chaos-prng.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { engineServe, readDb } from "../support/engine-serve.ts";
import { tempDir } from "../support/temp.ts";

const TURNS = 54;
const KILLS = 10;
const FINAL = new Set(["completed", "failed", "cancelled"]);
const LOST = new Set(["submission_unknown", "interrupted"]);

type Known = { commandId: string; threadId: string; label: string; turnId: string | null };

async function state(c: ControllerClient, turnId: string): Promise<string> {
  return String(((await c.call("turns.get", { turnId })) as { state: string }).state);
}

test("P-ARC-14 chaos: >=50 turns, 3 workspaces, >=10 SIGKILLs: executed-twice 0, lost 0, overlaps 0", async (t) => {
  const dir = tempDir(t, "aic-chaos-");
  const agent = scriptedAgent({ steps: [{ say: "working", messageId: "m1" }, { sleep: 150 }, { say: "done", messageId: "m2" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 3);
  const rand = createPrng(0xc4a05);
  const known: Known[] = [];
  const threads: string[] = [];
  let kills = 0;
  let unacknowledged = 0;
  let resolvedLost = 0;
  for (let life = 0; ; life++) {
    await serve.start();
    const c = await serve.client();
    if (threads.length === 0) {
      for (let w = 1; w <= 3; w++) for (let k = 0; k < 2; k++) threads.push(String((await c.createThread({ workspace: `ws-${w}`, provider: "scripted" })).threadId));
    }
    for (const th of threads) await c.attach(th);
    // Lost acks are resolved by command identity; the same command goes again only if never seen (P-TRN-28).
    for (const k of known.filter((x) => x.turnId === null)) {
      k.turnId = String((await c.command("turns.submit", { threadId: k.threadId, input: { text: k.label } }, k.commandId)).turnId);
    }
    for (const k of known) {
      if (k.turnId !== null && LOST.has(await state(c, k.turnId))) {
        // The service died, so its agents (children on its pipes) have exited: external work stopped.
        await c.command("turns.resolve", { turnId: k.turnId, as: "failed", confirmExternalStopped: true });
        resolvedLost += 1;
      }
    }
    const done = kills >= KILLS && known.length >= TURNS;
    if (!done) {
      const batch = Math.min(TURNS - known.length, 4 + Math.floor(rand() * 4));
      const pending: Promise<void>[] = [];
      for (let i = 0; i < batch; i++) {
        const k: Known = { commandId: `chaos-${known.length}`, threadId: threads[Math.floor(rand() * threads.length)] as string, label: `CHAOS-TURN-${known.length}-`, turnId: null };
        known.push(k);
        pending.push(c.submitTurn(k.threadId, { text: k.label }, k.commandId).then((r) => { k.turnId = String(r.turnId); }, (e: unknown) => {
          if (!(e instanceof ClientError)) throw e;
          unacknowledged += 1;
        }));
      }
      if (kills < KILLS) {
        await new Promise((r) => setTimeout(r, 150 + Math.floor(rand() * 900)));
        c.close();
        await serve.kill("SIGKILL");
        await Promise.allSettled(pending);
        kills += 1;
        continue;
      }
      await Promise.all(pending);
    }
    // Final lifetime: let every accepted turn settle, resolving lost ones.
    const end = Date.now() + 120_000;
    for (;;) {
      let open = 0;
      for (const k of known) {
        const s = await state(c, k.turnId as string);
        if (LOST.has(s)) { await c.command("turns.resolve", { turnId: k.turnId, as: "failed", confirmExternalStopped: true }); resolvedLost += 1; }
        if (!FINAL.has(s)) open += 1;
      }
      if (open === 0) break;
      assert.ok(Date.now() < end, `turns still open: ${open}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    c.close();
    await serve.kill("SIGTERM");
    break;
  }

  const rows = readDb<{ turn_id: string; state: string; workspace_id: string }>(serve.databasePath, "SELECT turn_id, state, workspace_id FROM turns");
  const byId = new Map(rows.map((r) => [r.turn_id, r]));
  const accepted = known.filter((k) => k.turnId !== null);
  const lost = accepted.filter((k) => { const r = byId.get(k.turnId as string); return !r || !(FINAL.has(r.state) || LOST.has(r.state)); }).length;
  const prompts = agent.log().filter((e) => e.event === "prompt");
  const executedTwice = known.filter((k) => prompts.filter((p) => String(p.text) === k.label).length > 1).length;
  let overlaps = 0;
  const held = new Map<string, string>();
  const leases = readDb<{ turn_id: string; kind: string; metadata: string }>(serve.databasePath, "SELECT turn_id, kind, metadata FROM journal WHERE kind IN ('lease_acquired', 'lease_released') ORDER BY journal_id");
  for (const l of leases) {
    const ws = String((JSON.parse(l.metadata) as { workspaceId: string }).workspaceId);
    if (l.kind === "lease_acquired") {
      if (held.has(ws)) overlaps += 1;
      held.set(ws, l.turn_id);
    } else if (held.get(ws) === l.turn_id) held.delete(ws);
  }
  const completed = rows.filter((r) => r.state === "completed").length;
  console.log(`chaos: accepted=${accepted.length} unacknowledged-then-resolved=${unacknowledged} sigkills=${kills} workspaces=3 completed=${completed} resolved-lost=${resolvedLost} executed-twice=${executedTwice} lost=${lost} overlaps=${overlaps}`);
  assert.ok(accepted.length >= 50);
  assert.ok(kills >= 10);
  assert.equal(new Set(rows.map((r) => r.workspace_id)).size, 3);
  assert.equal(executedTwice, 0);
  assert.equal(lost, 0);
  assert.equal(overlaps, 0);
});
