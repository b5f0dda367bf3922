// The typed SDK against a running serve (issue 25 point 6): threads, turns,
// interactions and events through typed calls; turns.wait and the event
// iterator ride on the subscription, so a long turn costs the same few
// turns.get requests as a short one (no polling).
import assert from "node:assert/strict";
import { test } from "node:test";
import { ClientError, ControllerClient, isEventOf, type ThreadEventDelivery, type Turn } from "../../src/client.ts";
import { METHOD_NAMES } from "../../src/domain/contract/methods.ts";
import type { SocketLike } from "../../src/transport/ws-client.ts";
import { ENGINE_TOKENS, engineServe } from "../support/engine-serve.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { tempDir } from "../support/temp.ts";
import { tool } from "../support/tool-spec.ts";

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

test("P-SDK-01 P-OPS-09 P-PRF-03 client.events rides on the subscription and turns.wait on one held request: typed results, no polling", { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t, "aic-sdk-typed-");
  const agent = scriptedAgent({ steps: [{ say: "hel", messageId: "m1" }, { sleep: 1500 }, { say: "lo", messageId: "m1" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 1);
  await serve.start();
  const counts = new Map<string, number>();
  const token = ENGINE_TOKENS[0].value;
  const c = await ControllerClient.connect({ url: serve.url, credential: { type: "token", token }, socketFactory: countingFactory(counts), maxReconnectAttempts: 0 });
  t.after(() => c.close());
  const { threadId } = await c.threads.create({ workspace: "ws-1", provider: "scripted" });
  const stream = c.events(threadId);
  const receipt = await c.turns.submit(threadId, { text: "hi" });
  assert.equal(receipt.threadId, threadId);
  assert.equal(receipt.attemptOf, null);
  const turn: Turn = await c.turns.wait(receipt.turnId, { timeoutMs: 60_000 });
  assert.equal(turn.state, "completed");
  assert.equal(turn.errorCode, null);
  assert.equal(turn.config.retention, "full");
  // A 1.5 s turn: one turns.wait held by the service until the outcome; no read loop, no subscription of its own.
  assert.equal(counts.get("turns.wait"), 1);
  assert.equal(counts.get("turns.get") ?? 0, 0);
  assert.equal(counts.get("threads.subscribe"), 1, "the event stream's subscription only");
  const seen: ThreadEventDelivery[] = [];
  for await (const delivery of stream) {
    seen.push(delivery);
    if (delivery.event.kind === "turn_outcome") break;
  }
  const kinds = seen.map((d) => d.event.kind);
  assert.deepEqual(kinds, ["user_prompt", "text", "text", "message_completed", "turn_outcome"]);
  for (let i = 1; i < seen.length; i++) assert.equal(seen[i]!.seq, seen[i - 1]!.seq + 1);
  const reply = seen.map((d) => d.event).filter((e) => isEventOf(e, "text")).map((e) => e.payload?.text ?? "").join("");
  assert.equal(reply, "hello");
  const outcome = seen.at(-1)!.event;
  assert.ok(isEventOf(outcome, "turn_outcome"));
  assert.equal(outcome.metadata.state, "completed");
  assert.equal(outcome.metadata.errorCode, null);
  // Leaving the loop unsubscribed: the server holds no subscription of this client for the stream.
  const snap = await c.threads.snapshot(threadId);
  assert.equal(snap.busy, false);
  assert.equal(snap.binding.retention, "full");
  // The binding exactly as the snapshot returns it (applicationRef: null included) is accepted back (D7).
  const other = await serve.client();
  t.after(() => other.close());
  assert.equal((await other.threads.attach(threadId, snap.binding)).threadId, threadId);
  const history = await c.threads.replayAll(threadId);
  assert.deepEqual(history.filter((e) => e.turnId === receipt.turnId).map((e) => e.kind), ["user_prompt", "text", "text", "message_completed", "turn_outcome"]);
  // Waiting on a settled turn answers at once; typed failures carry a ClientErrorCode.
  assert.equal((await c.turns.wait(receipt.turnId)).state, "completed");
  await assert.rejects(c.turns.wait("no-such-turn"), (e: unknown) => e instanceof ClientError && e.code === "not_found");
  await assert.rejects(c.turns.get("bad id!"), (e: unknown) => e instanceof ClientError && e.code === "invalid_params");
  // Dispatch validates every method's params with its contract schema: an unknown key is refused everywhere (D4).
  for (const method of METHOD_NAMES.filter((m) => m !== "hello" && m !== "auth.revoke")) {
    await assert.rejects(c.call(method, { zzUnknownKey: 1 }), (e: unknown) => e instanceof ClientError && e.code === "invalid_params", method);
  }
});

test("P-SDK-01 P-PRV-11 turns.wait ends with wait_timeout at its deadline; a refused subscription and refused tool contracts surface as typed errors", { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t, "aic-sdk-wait-");
  const agent = scriptedAgent({ steps: [{ stall: true }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 1);
  await serve.start();
  const c = await serve.client();
  t.after(() => c.close());
  const { threadId } = await c.threads.create({ workspace: "ws-1", provider: "scripted" });
  const { turnId } = await c.turns.submit(threadId, "stall");
  await assert.rejects(c.turns.wait(turnId, { timeoutMs: 300 }), (e: unknown) => e instanceof ClientError && e.code === "wait_timeout");
  await c.turns.cancel(turnId);
  const settled = await c.turns.wait(turnId, { timeoutMs: 30_000 });
  assert.equal(settled.state, "cancelled");
  // Tools are registered with a description and an input schema, checked and bounded at registration (issue 25 point 3).
  const refused = (e: unknown) => e instanceof ClientError && e.code === "invalid_params";
  await assert.rejects(c.registerEndpoint({ endpointId: "t1", kind: "tools", tools: { x: tool(() => 1, "x".repeat(2049)) } }), refused);
  await assert.rejects(c.registerEndpoint({ endpointId: "t1", kind: "tools", tools: { x: tool(() => 1, "d", { type: "object", properties: { a: { $ref: "#" } } }) } }), refused);
  await assert.rejects(c.registerEndpoint({ endpointId: "t1", kind: "tools", tools: { x: tool(() => 1, "d", { type: "array" }) } }), refused);
  await assert.rejects(c.call("endpoints.register", { endpointId: "t1", kind: "tools", tools: ["x"] }), refused);
  await c.registerEndpoint({ endpointId: "t1", kind: "tools", tools: { x: tool(() => 1, "x".repeat(2048), { type: "object", properties: { a: { type: "integer", minimum: 0 } } }) } });
  const missing = c.events("no-such-thread");
  await assert.rejects(missing.next(), (e: unknown) => e instanceof ClientError && e.code === "not_found");
});
