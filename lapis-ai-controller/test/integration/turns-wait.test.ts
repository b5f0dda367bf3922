// turns.wait is the service's own method: one request, held until the turn is
// settled and answered right after the outcome's commit (so what it answers is
// already durable), or, when its hold passes first, with the turn as it
// stands; the SDK then asks again until its own deadline.
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { ControllerClient } from "../../src/client.ts";
import type { SocketLike } from "../../src/transport/ws-client.ts";
import { ENGINE_TOKENS, engineServe } from "../support/engine-serve.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { tempDir } from "../support/temp.ts";

/** A WebSocket factory that counts the requests the client sends, by method. */
function countingFactory(counts: Map<string, number>) {
  return (url: string): SocketLike => {
    const socket = new WebSocket(url);
    const send = socket.send.bind(socket);
    socket.send = (data: string) => {
      const method = (JSON.parse(data) as { method?: string }).method;
      if (method !== undefined) counts.set(method, (counts.get(method) ?? 0) + 1);
      send(data);
    };
    return socket as unknown as SocketLike;
  };
}

/** The turn's state as a second, read-only connection reads it: committed rows only. */
function committedState(path: string, turnId: string): string | undefined {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return (db.prepare("SELECT state FROM turns WHERE turn_id = ?").get(turnId) as { state: string } | undefined)?.state;
  } finally { db.close(); }
}

test("P-PRF-03 turns.wait is one request, answered with the settled turn only once its outcome is committed; no subscription, no turns.get", { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t, "aic-wait-");
  const agent = scriptedAgent({ steps: [{ sleep: 800 }, { say: "done", messageId: "m1" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 1);
  await serve.start();
  const counts = new Map<string, number>();
  const c = await ControllerClient.connect({ url: serve.url, credential: { type: "token", token: ENGINE_TOKENS[0].value }, socketFactory: countingFactory(counts), maxReconnectAttempts: 0 });
  t.after(() => c.close());
  const { threadId } = await c.threads.create({ workspace: "ws-1", provider: "scripted" });
  const { turnId } = await c.turns.submit(threadId, { text: "hi" });
  const turn = await c.turns.wait(turnId, { timeoutMs: 30_000 });
  // Read at once, before anything else runs here: the answer never runs ahead of the commit.
  const durable = committedState(serve.databasePath, turnId);
  assert.equal(turn.state, "completed");
  assert.equal(durable, "completed", "the outcome the wait answered is already committed");
  assert.equal(turn.errorCode, null);
  assert.equal(counts.get("turns.wait"), 1);
  assert.equal(counts.get("turns.get") ?? 0, 0);
  assert.equal(counts.get("threads.subscribe") ?? 0, 0);
  // A settled turn is answered at once, as turns.get answers it.
  assert.deepEqual(await c.turns.wait(turnId), await c.turns.get(turnId));
});

test("P-PRF-03 a held turns.wait answers the unsettled turn when its hold passes; the SDK asks again until the outcome", { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t, "aic-wait-hold-");
  const agent = scriptedAgent({ steps: [{ stall: true }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 1);
  await serve.start();
  const counts = new Map<string, number>();
  // A 500 ms request timeout: each held slice ends after 400 ms, before the client would give up on it (a slice answered later is asked again).
  const c = await ControllerClient.connect({ url: serve.url, credential: { type: "token", token: ENGINE_TOKENS[0].value }, socketFactory: countingFactory(counts), maxReconnectAttempts: 0, requestTimeoutMs: 500 });
  t.after(() => c.close());
  const { threadId } = await c.threads.create({ workspace: "ws-1", provider: "scripted" });
  const { turnId } = await c.turns.submit(threadId, { text: "stall" });
  // The service's hold, seen on a client whose request timeout leaves a loaded host room to answer.
  const patient = await ControllerClient.connect({ url: serve.url, credential: { type: "token", token: ENGINE_TOKENS[0].value }, maxReconnectAttempts: 0, requestTimeoutMs: 10_000 });
  t.after(() => patient.close());
  const started = Date.now();
  const held = await patient.call("turns.wait", { turnId, timeoutMs: 200 }) as { state: string };
  assert.ok(Date.now() - started >= 190, "held for its hold");
  assert.ok(["preparing", "dispatched", "running"].includes(held.state), held.state);
  const waiting = c.turns.wait(turnId, { timeoutMs: 30_000 });
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  await c.turns.cancel(turnId);
  assert.equal((await waiting).state, "cancelled");
  assert.ok((counts.get("turns.wait") ?? 0) >= 1 + 3, `turns.wait sent ${counts.get("turns.wait")} times`);
});

test("P-PRF-03 held waits count as the connection's subscriptions: past maxSubscriptionsPerConnection a wait is refused subscription_limit", { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t, "aic-wait-cap-");
  const agent = scriptedAgent({ steps: [{ stall: true }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 1, {}, "node", { limits: { protocol: { maxSubscriptionsPerConnection: 2 } } });
  await serve.start();
  const c = await ControllerClient.connect({ url: serve.url, credential: { type: "token", token: ENGINE_TOKENS[0].value }, maxReconnectAttempts: 0 });
  t.after(() => c.close());
  const { threadId } = await c.threads.create({ workspace: "ws-1", provider: "scripted" });
  const { turnId } = await c.turns.submit(threadId, { text: "stall" });
  const held = [c.call("turns.wait", { turnId, timeoutMs: 3_000 }), c.call("turns.wait", { turnId, timeoutMs: 3_000 })];
  await new Promise((resolve) => setTimeout(resolve, 300));
  await assert.rejects(c.call("turns.wait", { turnId, timeoutMs: 3_000 }), (e: unknown) => (e as { code?: string }).code === "subscription_limit");
  await c.turns.cancel(turnId);
  for (const answer of await Promise.all(held)) assert.equal((answer as { state: string }).state, "cancelled");
  // The holds ended with the outcome: the bound is free again.
  assert.equal((await c.turns.wait(turnId)).state, "cancelled");
});
