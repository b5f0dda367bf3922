// turns.continue, black-box through the SDK against `serve` with the scripted
// ACP agent. P-TRN-20..26, P-STO-16, P-ARC-19.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ClientError, type ControllerClient } from "../../src/client.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { engineServe, readDb, waitTurn } from "../support/engine-serve.ts";
import { tempDir } from "../support/temp.ts";

async function code(p: Promise<unknown>): Promise<string> {
  try { await p; return "ok"; } catch (e) { return e instanceof ClientError ? e.code : String(e); }
}

const cont = (c: ControllerClient, turnId: string, text: string, commandId?: string) => c.command("turns.continue", { turnId, input: { text } }, commandId);

test("turns.continue through serve", async (t) => {
  const dir = tempDir(t, "aic-continue-");
  const main = scriptedAgent({
    byPrompt: {
      STALL: [{ say: "s" }, { stall: true }],
      ASK: [{ permission: { toolCallId: "p", options: [{ optionId: "y", kind: "allow_once" }] } }],
      TOOLOPEN: [{ tool: { id: "tx", title: "run", kind: "execute" } }, { say: "left open" }],
    },
    steps: [{ say: "REPLY-TEXT", messageId: "m1" }],
  }, "main", dir);
  const stuck = scriptedAgent({ steps: [{ say: "s" }, { stall: true }], cancel: "never" }, "stuck", dir);
  const serve = engineServe(t, dir, [main.provider, stuck.provider], 5, { cancelConfirmMs: 500 });
  await serve.start();
  let c = await serve.client();
  const thread = async (ws: number, provider = "main", binding: Record<string, unknown> = {}) =>
    String((await c.createThread({ workspace: `ws-${ws}`, provider, binding })).threadId);
  const prompts = () => [...main.log(), ...stuck.log()].filter((e) => e.event === "prompt").map((e) => String(e.text));

  await t.test("P-TRN-20 P-TRN-21 P-TRN-25 P-ARC-19 a linked attempt with new instructions and evidence, never the original prompt", async () => {
    const th = await thread(1);
    const prior = await c.submitTurn(th, { text: "ORIGINAL-XYZ" }, "prior-cmd");
    const priorId = String(prior.turnId);
    await waitTurn(c, priorId, ["completed"]);
    await c.command("threads.configure", { threadId: th, expectedVersion: 1, config: { approvalPolicy: "ask" } });
    assert.equal(await code(cont(c, priorId, "NEW-INSTRUCTIONS", "prior-cmd")), "command_conflict");
    const r1 = await cont(c, priorId, "NEW-INSTRUCTIONS", "cont-1");
    const r2 = await cont(c, priorId, "NEW-INSTRUCTIONS", "cont-1");
    assert.deepEqual(r1, r2);
    assert.equal(await code(cont(c, priorId, "OTHER", "cont-1")), "command_conflict");
    const next = (await waitTurn(c, String(r1.turnId), ["completed"])) as { attemptOf: string; threadId: string; config: { configVersion: number } };
    assert.equal(next.attemptOf, priorId);
    assert.equal(next.threadId, th);
    assert.equal(next.config.configVersion, 2);
    const last = prompts().at(-1) as string;
    assert.match(last, /NEW-INSTRUCTIONS/);
    assert.match(last, /REPLY-TEXT/);
    assert.doesNotMatch(last, /ORIGINAL-XYZ/);
    assert.equal(prompts().filter((p) => p.includes("ORIGINAL-XYZ")).length, 1);
    // One native session for the thread, apart from turn and command identities.
    const sessions = readDb<{ native_session_id: string }>(serve.databasePath, "SELECT native_session_id FROM provider_sessions WHERE thread_id = ?", th);
    assert.equal(sessions.length, 1);
    assert.notEqual(sessions[0]?.native_session_id, priorId);
  });

  await t.test("P-TRN-22 P-TRN-23 P-TRN-24 every rejection, no fence released, nothing re-sent", async () => {
    const active = String((await c.submitTurn(await thread(2), { text: "STALL" })).turnId);
    await waitTurn(c, active, ["running"]);
    assert.equal(await code(cont(c, active, "again")), "turn_active");
    await c.command("turns.cancel", { turnId: active });
    await waitTurn(c, active, ["cancelled"]);

    const asking = String((await c.submitTurn(await thread(2), { text: "ASK" })).turnId);
    await waitTurn(c, asking, ["waiting"]);
    assert.equal(await code(cont(c, asking, "again")), "interaction_pending");
    await c.command("turns.cancel", { turnId: asking });
    await waitTurn(c, asking, ["cancelled", "completed"]);

    const open = String((await c.submitTurn(await thread(2), { text: "TOOLOPEN" })).turnId);
    await waitTurn(c, open, ["completed"]);
    assert.equal(await code(cont(c, open, "again")), "tool_effect_unknown");

    const fenced = String((await c.submitTurn(await thread(3, "stuck"), { text: "FENCE-ME" })).turnId);
    await waitTurn(c, fenced, ["running"]);
    await c.command("turns.cancel", { turnId: fenced });
    await waitTurn(c, fenced, ["interrupted"]);
    const before = prompts().length;
    assert.equal(await code(cont(c, fenced, "again")), "turn_fenced");
    assert.deepEqual(readDb<{ kind: string }>(serve.databasePath, "SELECT kind FROM workspace_leases WHERE workspace_id = 'ws-3'").map((r) => r.kind), ["fence"]);
    assert.equal(prompts().length, before);
    assert.equal((await c.call("turns.get", { turnId: fenced }) as { state: string }).state, "interrupted");

    const bob = await serve.client("bob");
    assert.equal(await code(cont(bob, open, "again")), "not_found");
    bob.close();
  });

  await t.test("P-STO-16 P-TRN-22 P-TRN-26 metadata-only history lost on restart: continue refused, a queued attempt fails at preparation", async () => {
    const th = await thread(4, "main", { retention: "metadata-only" });
    const prior = String((await c.submitTurn(th, { text: "META-PRIOR" })).turnId);
    await waitTurn(c, prior, ["completed"]);
    const blockerThread = await thread(4);
    const blocker = String((await c.submitTurn(blockerThread, { text: "STALL" })).turnId);
    await waitTurn(c, blocker, ["running"]);
    const queued = String((await cont(c, prior, "NEW2-INSTRUCTIONS")).turnId);
    c.close();
    await serve.kill("SIGKILL");
    await serve.start();
    c = await serve.client();
    await c.attach(th, { retention: "metadata-only" });
    assert.equal(await code(cont(c, prior, "NEW3")), "transcript_unavailable");
    assert.equal((await c.call("turns.get", { turnId: queued }) as { state: string }).state, "queued");
    await c.command("turns.resolve", { turnId: blocker, as: "failed", confirmExternalStopped: true });
    const failed = (await waitTurn(c, queued, ["failed"])) as { errorCode: string };
    assert.equal(failed.errorCode, "continuation_evidence_unavailable");
    assert.equal(prompts().filter((p) => p.includes("NEW2")).length, 0);
  });
  c.close();
});
