// Interactions and approval policy, black-box through the SDK against `serve`
// with scripted ACP agents. P-ARC-15, P-TRN-10/11/13..19, P-PRV-18.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ClientError, type ControllerClient } from "../../src/client.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { engineServe, readDb, waitTurn } from "../support/engine-serve.ts";
import { tempDir } from "../support/temp.ts";

type Interaction = { interactionId: string; nativeRequestId: string; state: string; optionIds: string[]; optionId: string | null; decidedBy: string | null; category: string };
type TurnView = { state: string; interactions: Interaction[] };

const OPTS = [{ optionId: "allow#once", kind: "allow_once" }, { optionId: "deny#once", kind: "reject_once" }];

async function code(p: Promise<unknown>): Promise<string> {
  try { await p; return "ok"; } catch (e) { return e instanceof ClientError ? e.code : String(e); }
}

async function view(c: ControllerClient, turnId: string): Promise<TurnView> {
  return (await c.call("turns.get", { turnId })) as TurnView;
}

async function pendingCount(c: ControllerClient, turnId: string, n: number): Promise<TurnView> {
  const end = Date.now() + 15_000;
  for (;;) {
    const v = await view(c, turnId);
    if (v.interactions.filter((i) => i.state === "pending").length === n) return v;
    if (Date.now() > end) throw new Error(`pending != ${n}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 30));
  }
}

test("interactions and approval policy through serve", async (t) => {
  const dir = tempDir(t, "aic-interact-");
  const two = scriptedAgent({ steps: [{ permissions: [{ toolCallId: "t1", options: OPTS }, { toolCallId: "t2", options: OPTS }] }, { say: "after" }] }, "two", dir);
  const one = scriptedAgent({ steps: [{ permission: { toolCallId: "t1", options: OPTS } }, { say: "after" }] }, "one", dir);
  const late = scriptedAgent({ steps: [{ say: "quick" }], lateRequest: { toolCallId: "late", options: OPTS } }, "late", dir);
  const structured = scriptedAgent({ steps: [{ permission: { toolCallId: "q", kind: "other", options: [{ optionId: "answer", kind: "reject_once" }] } }] }, "structured", dir);
  const unknown = scriptedAgent({ steps: [{ unknownRequest: "x/unknown" }, { say: "went on" }] }, "unknown", dir);
  const serve = engineServe(t, dir, [two.provider, one.provider, late.provider, structured.provider, unknown.provider], 5, { interactionDeadlineMs: 1500 });
  await serve.start();
  const c = await serve.client();
  const thread = async (provider: string, ws: number, extra: Record<string, unknown> = {}) =>
    String((await c.createThread({ workspace: `ws-${ws}`, provider, ...extra })).threadId);

  let firstTurn = "";
  let firstInteraction = "";
  await t.test("P-TRN-15 P-ARC-15 P-TRN-16 two concurrent requests keep the turn waiting until both settle; one response per id", async () => {
    const turnId = String((await c.submitTurn(await thread("two", 1), { text: "go" })).turnId);
    const v = await pendingCount(c, turnId, 2);
    assert.equal(v.state, "waiting");
    // The interaction rows are durable before the agent has any answer (P-ARC-15).
    assert.equal(two.log().filter((e) => e.event === "permission_response").length, 0);
    assert.equal(readDb(serve.databasePath, "SELECT 1 FROM interactions WHERE turn_id = ? AND state = 'pending'", turnId).length, 2);
    const [a, b] = v.interactions as [Interaction, Interaction];
    assert.deepEqual(a.optionIds, ["allow#once", "deny#once"]);
    await c.command("interactions.respond", { turnId, interactionId: a.interactionId, optionId: "allow#once" });
    assert.equal((await view(c, turnId)).state, "waiting");
    await c.command("interactions.respond", { turnId, interactionId: b.interactionId, optionId: "deny#once" });
    await waitTurn(c, turnId, ["completed"]);
    const responses = two.log().filter((e) => e.event === "permission_response");
    assert.deepEqual(responses.map((r) => JSON.stringify(r.outcome)).sort(), [
      JSON.stringify({ outcome: "selected", optionId: "allow#once" }), JSON.stringify({ outcome: "selected", optionId: "deny#once" }),
    ].sort());
    const settled = readDb<{ metadata: string }>(serve.databasePath, "SELECT metadata FROM journal WHERE turn_id = ? AND kind = 'interaction_settled'", turnId)
      .map((r) => JSON.parse(r.metadata) as Record<string, unknown>);
    assert.equal(settled.length, 2);
    for (const s of settled) assert.ok(s.turnId === turnId && typeof s.nativeRequestId === "string" && s.outcome === "settled");
    firstTurn = turnId;
    firstInteraction = a.interactionId;
  });

  await t.test("P-TRN-14 answering after the turn ended gives interaction_closed and the state is unchanged", async () => {
    assert.equal(await code(c.command("interactions.respond", { turnId: firstTurn, interactionId: firstInteraction, optionId: "deny#once" })), "interaction_closed");
    assert.equal((await view(c, firstTurn)).state, "completed");
  });

  await t.test("P-TRN-13 P-TRN-17 P-TRN-19 an answer after the host deadline is interaction_expired; reconnect does not reset it; one response", async () => {
    const turnId = String((await c.submitTurn(await thread("one", 2), { text: "go" })).turnId);
    const v = await pendingCount(c, turnId, 1);
    const i = v.interactions[0] as Interaction;
    assert.equal(await code(c.command("interactions.respond", { turnId: firstTurn, interactionId: i.interactionId, optionId: "allow#once" })), "not_found", "a settlement naming another turn is rejected (P-TRN-16)");
    await waitTurn(c, turnId, ["completed"]);
    assert.equal(await code(c.command("interactions.respond", { turnId, interactionId: i.interactionId, optionId: "allow#once" })), "interaction_expired");
    const again = await serve.client();
    assert.equal(await code(again.command("interactions.respond", { turnId, interactionId: i.interactionId, optionId: "allow#once" })), "interaction_expired");
    assert.equal(((await view(again, turnId)).interactions[0] as Interaction).state, "expired");
    assert.equal((await view(again, turnId)).interactions.length, 1, "replay opens no new approval");
    again.close();
    const responses = one.log().filter((e) => e.event === "permission_response");
    assert.equal(responses.length, 1);
    assert.deepEqual(responses[0]?.outcome, { outcome: "cancelled" });
  });

  await t.test("P-TRN-18 a request after the prompt response leaves the turn completed and gets an error", async () => {
    const turnId = String((await c.submitTurn(await thread("late", 3), { text: "go" })).turnId);
    await waitTurn(c, turnId, ["completed"]);
    const end = Date.now() + 5_000;
    while (!late.log().some((e) => e.event === "permission_error") && Date.now() < end) await new Promise((r) => setTimeout(r, 30));
    assert.ok(late.log().some((e) => e.event === "permission_error"));
    const v = await view(c, turnId);
    assert.equal(v.state, "completed");
    assert.equal(v.interactions.length, 0);
  });

  let policyTurn = "";
  await t.test("P-TRN-10 allow-all resolves the offered execution approval with its exact id, decidedBy policy", async () => {
    const turnId = String((await c.submitTurn(await thread("one", 2, { config: { approvalPolicy: "allow-all" } }), { text: "go" })).turnId);
    const v = await waitTurn(c, turnId, ["completed"]) as unknown as TurnView;
    assert.equal(v.interactions.length, 1);
    assert.deepEqual({ optionId: v.interactions[0]?.optionId, decidedBy: v.interactions[0]?.decidedBy }, { optionId: "allow#once", decidedBy: "policy" });
    policyTurn = turnId;
  });

  await t.test("P-SDK-01 every question that waits for the application is an interaction_requested event in the thread's stream; one the policy answered is not", async () => {
    const requested = async (turnId: string) => {
      const { threadId } = (await c.call("turns.get", { turnId })) as { threadId: string };
      const page = (await c.call("threads.replay", { threadId, afterSeq: 0, limit: 1000 })) as { events: { turnId: string | null; kind: string; metadata: Record<string, unknown> }[] };
      return page.events.filter((e) => e.turnId === turnId && e.kind === "interaction_requested").map((e) => e.metadata);
    };
    const asked = await requested(firstTurn);
    assert.equal(asked.length, 2);
    assert.ok(asked.some((m) => m.interactionId === firstInteraction));
    assert.ok(asked.every((m) => m.category === "execution" && typeof m.deadlineAt === "number"));
    assert.deepEqual(await requested(policyTurn), []);
  });

  await t.test("P-TRN-11 structured input and restricted sessions never inherit automatic approval", async () => {
    const s = String((await c.submitTurn(await thread("structured", 4, { config: { approvalPolicy: "allow-all" } }), { text: "go" })).turnId);
    const sv = await pendingCount(c, s, 1);
    assert.equal(sv.interactions[0]?.category, "structured_input");
    await c.command("turns.cancel", { turnId: s });
    const r = String((await c.submitTurn(await thread("one", 5, { config: { approvalPolicy: "allow-all" }, binding: { restricted: true } }), { text: "go" })).turnId);
    const rv = await pendingCount(c, r, 1);
    assert.equal(rv.state, "waiting");
    await c.command("turns.cancel", { turnId: r });
  });

  await t.test("P-PRV-18 an unknown agent request gets -32601 and the turn goes on", async () => {
    const turnId = String((await c.submitTurn(await thread("unknown", 1), { text: "go" })).turnId);
    await waitTurn(c, turnId, ["completed"]);
    assert.ok(unknown.log().some((e) => e.event === "unknown_error" && e.code === -32601));
  });
  c.close();
});
