// Context and preparation endpoints (issue 25 point 1), black-box through the
// SDK against `serve` with the scripted ACP agent: the context reaches the
// agent's prompt once per turn, only when the turn is eligible; a veto, a slow,
// failing, disconnected or disposed endpoint fails the turn with a stable code
// and the agent receives nothing. P-SDK-02/13/14/16/18, P-ARC-10, P-ARC-23.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ControllerClient, TurnPreparationRequest } from "../../src/client.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { engineServe, readDb, waitTurn } from "../support/engine-serve.ts";
import { tempDir } from "../support/temp.ts";

async function until(fn: () => boolean, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

test("context and preparation endpoints through serve", async (t) => {
  const dir = tempDir(t, "aic-context-");
  const agent = scriptedAgent({ byPrompt: { STALL: [{ say: "s" }, { stall: true }] }, steps: [{ say: "ok", messageId: "m1" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 6, { contextDeadlineMs: 3_000 });
  await serve.start();
  const c = await serve.client();
  t.after(() => c.close());
  const prompts = () => agent.log().filter((e) => e.event === "prompt").map((e) => String(e.text));
  const thread = async (ws: number, contextSources: string[], threadId?: string) =>
    String((await c.createThread({ workspace: `ws-${ws}`, provider: "scripted", binding: { contextSources }, ...(threadId === undefined ? {} : { threadId }) })).threadId);
  const spawns = () => agent.log().filter((e) => e.event === "spawn").length;
  const failedWith = async (client: ControllerClient, threadId: string, code: string) => {
    const before = prompts().length;
    const spawned = spawns();
    const turnId = String((await client.submitTurn(threadId, { text: "MUST-NOT-ARRIVE" })).turnId);
    const view = await waitTurn(client, turnId, ["failed", "completed"], 20_000);
    assert.equal(view.state, "failed");
    assert.equal(view.errorCode, code);
    assert.equal(prompts().length, before, "nothing was dispatched");
    assert.equal(spawns(), spawned, "no agent was even started (context precedes provider setup)");
    assert.equal(prompts().some((p) => p.includes("MUST-NOT-ARRIVE")), false);
    return turnId;
  };

  await t.test("P-SDK-18 P-SDK-02 P-SDK-13 P-ARC-10 a preparation endpoint registered on a reserved id and a context endpoint: each asked once, their context once in the prompt, ahead of it", async () => {
    const reserved = await c.reserveThread();
    const seen: TurnPreparationRequest[] = [];
    await c.registerEndpoint({ endpointId: "prep-a", kind: "preparation", threadId: reserved, prepare: (r) => { seen.push(r); return { context: "MEMORY-CANARY-71" }; } });
    await c.registerEndpoint({ endpointId: "ctx-a", kind: "context", threadId: reserved, context: (r) => { seen.push(r); return { context: "CONTEXT-CANARY-53" }; } });
    const threadId = await thread(1, ["prep-a", "ctx-a"], reserved);
    assert.equal(threadId, reserved);
    const turnId = String((await c.submitTurn(threadId, { text: "USER-PROMPT" })).turnId);
    await waitTurn(c, turnId, ["completed"]);
    assert.equal(seen.length, 2);
    assert.ok(seen.every((r) => r.threadId === reserved && r.turnId === turnId && r.prompt === "USER-PROMPT"), "the port receives the reserved thread identity");
    const text = prompts().find((p) => p.includes("USER-PROMPT")) ?? "";
    assert.equal(text.split("MEMORY-CANARY-71").length - 1, 1, "exactly once");
    assert.equal(text.split("CONTEXT-CANARY-53").length - 1, 1, "exactly once");
    // Sorted binding order: ctx-a before prep-a, both before the prompt.
    assert.ok(text.indexOf("CONTEXT-CANARY-53") < text.indexOf("MEMORY-CANARY-71") && text.indexOf("MEMORY-CANARY-71") < text.indexOf("USER-PROMPT"));
    // Callbacks are volatile: the thread row keeps only the endpoint identities (P-SDK-15).
    const row = readDb<{ binding: string }>(serve.databasePath, "SELECT binding FROM threads WHERE thread_id = ?", threadId)[0];
    assert.deepEqual(JSON.parse(row?.binding ?? "{}").contextSources, ["ctx-a", "prep-a"]);
    const db = readDb<{ n: number }>(serve.databasePath, "SELECT count(*) AS n FROM journal WHERE payload LIKE '%CANARY-%' OR metadata LIKE '%CANARY-%'");
    assert.equal(db[0]?.n, 0, "context text is given to the agent, not stored");
  });

  await t.test("P-SDK-14 a queued turn's context port is not called while it waits; it is called once the lease is granted", async () => {
    const calls: string[] = [];
    await c.registerEndpoint({ endpointId: "ctx-q", kind: "context", context: (r) => { calls.push(r.turnId); return { context: "QUEUED-CONTEXT" }; } });
    const first = await thread(2, []);
    const second = await thread(2, ["ctx-q"]);
    const t1 = String((await c.submitTurn(first, { text: "STALL" })).turnId);
    await until(() => prompts().some((p) => p.includes("STALL")), "turn 1 dispatched");
    const t2 = String((await c.submitTurn(second, { text: "SECOND-TURN" })).turnId);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await c.call("turns.get", { turnId: t2 }) as { state: string }).state, "queued");
    assert.deepEqual(calls, [], "not called while queued");
    await c.cancelTurn(t1);
    await waitTurn(c, t2, ["completed"]);
    assert.deepEqual(calls, [t2]);
    assert.ok(prompts().some((p) => p.includes("QUEUED-CONTEXT") && p.includes("SECOND-TURN")));
  });

  await t.test("P-SDK-02 a preparation veto fails the turn preparation_vetoed with the application's code, nothing dispatched", async () => {
    await c.registerEndpoint({ endpointId: "prep-veto", kind: "preparation", prepare: () => ({ veto: "quota_exceeded" }) });
    const turnId = await failedWith(c, await thread(3, ["prep-veto"]), "preparation_vetoed");
    const states = readDb<{ metadata: string }>(serve.databasePath, "SELECT metadata FROM journal WHERE turn_id = ? AND kind = 'turn_state'", turnId).map((r) => JSON.parse(r.metadata) as Record<string, unknown>);
    assert.equal(states.at(-1)?.vetoCode, "quota_exceeded");
  });

  await t.test("P-SDK-13 a slow context endpoint fails endpoint_timeout at the configured deadline", async () => {
    await c.registerEndpoint({ endpointId: "ctx-slow", kind: "context", context: () => new Promise(() => {}) });
    await failedWith(c, await thread(4, ["ctx-slow"]), "endpoint_timeout");
  });

  await t.test("P-SDK-13 a failing context endpoint fails context_failed", async () => {
    await c.registerEndpoint({ endpointId: "ctx-throws", kind: "context", context: () => { throw new Error("application bug"); } });
    await failedWith(c, await thread(5, ["ctx-throws"]), "context_failed");
  });

  await t.test("P-SDK-13 P-ARC-23 a disconnected or disposed endpoint fails endpoint_disconnected and its handler is never called", async () => {
    const other = await serve.client();
    let called = 0;
    await other.registerEndpoint({ endpointId: "ctx-gone", kind: "context", context: () => { called += 1; return { context: "x" }; } });
    const gone = await thread(6, ["ctx-gone"]);
    other.close();
    await failedWith(c, gone, "endpoint_disconnected");
    await c.registerEndpoint({ endpointId: "ctx-disposed", kind: "context", context: () => { called += 1; return { context: "x" }; } });
    const disposedThread = await thread(6, ["ctx-disposed"]);
    await c.disposeEndpoint("ctx-disposed");
    await failedWith(c, disposedThread, "endpoint_disconnected");
    assert.equal(called, 0);
  });

  await t.test("P-SDK-13 an endpoint whose connection drops during the call fails endpoint_disconnected at once", async () => {
    const other = await serve.client();
    let asked = false;
    await other.registerEndpoint({ endpointId: "ctx-drop", kind: "context", context: () => { asked = true; return new Promise(() => {}); } });
    const threadId = await thread(6, ["ctx-drop"]);
    const before = prompts().length;
    const turnId = String((await c.submitTurn(threadId, { text: "MUST-NOT-ARRIVE" })).turnId);
    await until(() => asked, "context asked");
    const dropped = Date.now();
    other.close();
    const view = await waitTurn(c, turnId, ["failed"], 5_000);
    assert.equal(view.errorCode, "endpoint_disconnected");
    assert.ok(Date.now() - dropped < 2_500, "settled by the disconnect, not by the 3 s deadline");
    assert.equal(prompts().length, before);
  });
});
