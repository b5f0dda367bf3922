// Application endpoints through the SDK on the in-process protocol layer:
// AIC-API-004d, P-API-08, P-ARC-23, P-PRV-19, P-SDK-15/16. The tool bridge
// (issue 15) will call EndpointRegistry.invokeTool exactly as these tests do.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ControllerClient } from "../../src/client.ts";
import { startHarness, TOKENS } from "../support/protocol-harness.ts";
import { startTcpProxy } from "../support/tcp-proxy.ts";
import { tool } from "../support/tool-spec.ts";

const A = { principal: "alice", application: "notes" };
const B = { principal: "alice", application: "chat" };
const BOB = { principal: "bob", application: "notes" };
const CREATE = { workspace: "ws-1", provider: "codex" };

function connect(url: string, token: string) {
  return ControllerClient.connect({ url, credential: { type: "token", token }, reconnectDelayMs: 20 });
}

test("AIC-API-004d P-API-08 a tool is invoked only for its own principal and application (and thread)", async (t) => {
  const h = await startHarness(t);
  const a = await connect(h.url, TOKENS.appA);
  const b = await connect(h.url, TOKENS.appB);
  const calls = { a: 0, b: 0 };
  const threadA = String((await a.createThread(CREATE)).threadId);
  const threadB = String((await b.createThread(CREATE)).threadId);
  await a.registerEndpoint({ endpointId: "tools-1", kind: "tools", tools: { x: tool(() => ++calls.a) } });
  await b.registerEndpoint({ endpointId: "tools-1", kind: "tools", tools: { x: tool(() => ++calls.b) } });
  const ok = await h.protocol.endpoints.invokeTool(A, threadA, "x", {}, 5000);
  assert.deepEqual(ok, { ok: true, value: 1 });
  assert.deepEqual(calls, { a: 1, b: 0 });
  // Bob (another principal) has no tool x: his thread cannot reach Alice's handlers.
  const denied = await h.protocol.endpoints.invokeTool(BOB, threadA, "x", {}, 5000);
  assert.equal(denied.ok ? "" : denied.error.code, "tool_not_found");
  await h.protocol.endpoints.invokeTool(B, threadB, "x", {}, 5000);
  assert.deepEqual(calls, { a: 1, b: 1 });
  // A thread-scoped endpoint is invisible to the owner's other threads.
  const threadA2 = String((await a.createThread(CREATE)).threadId);
  await a.registerEndpoint({ endpointId: "tools-2", kind: "tools", threadId: threadA2, tools: { y: tool(() => "y") } });
  const other = await h.protocol.endpoints.invokeTool(A, threadA, "y", {}, 5000);
  assert.equal(other.ok ? "" : other.error.code, "tool_not_found");
  assert.deepEqual(await h.protocol.endpoints.invokeTool(A, threadA2, "y", {}, 5000), { ok: true, value: "y" });
  a.close();
  b.close();
});

test("P-ARC-23 disposal revokes an endpoint at once, including a call in flight; a disconnect fails closed", async (t) => {
  const h = await startHarness(t);
  const a = await connect(h.url, TOKENS.appA);
  const threadId = String((await a.createThread(CREATE)).threadId);
  let release: () => void = () => {};
  await a.registerEndpoint({ endpointId: "slow", kind: "tools", tools: { wait: tool(() => new Promise<string>((r) => (release = () => r("late")))) } });
  const inFlight = h.protocol.endpoints.invokeTool(A, threadId, "wait", {}, 5000);
  await new Promise((r) => setTimeout(r, 50));
  await a.disposeEndpoint("slow");
  const settled = await inFlight;
  assert.equal(settled.ok ? "" : settled.error.code, "endpoint_revoked");
  release();
  const after = await h.protocol.endpoints.invokeTool(A, threadId, "wait", {}, 5000);
  assert.equal(after.ok ? "" : after.error.code, "tool_not_found");
  await a.registerEndpoint({ endpointId: "slow2", kind: "tools", tools: { wait: tool(() => new Promise(() => {})) } });
  const pending = h.protocol.endpoints.invokeTool(A, threadId, "wait", {}, 5000);
  await new Promise((r) => setTimeout(r, 50));
  a.close();
  const dropped = await pending;
  assert.equal(dropped.ok ? "" : dropped.error.code, "endpoint_disconnected");
  assert.equal(h.protocol.endpoints.countFor(A), 0);
});

test("P-PRV-19 a restricted thread refuses application tool endpoints", async (t) => {
  const h = await startHarness(t);
  const a = await connect(h.url, TOKENS.appA);
  const threadId = String((await a.createThread({ ...CREATE, binding: { restricted: true } })).threadId);
  await assert.rejects(a.registerEndpoint({ endpointId: "t", kind: "tools", threadId, tools: { x: tool(() => 1) } }), /restricted_tools_forbidden/);
  await a.registerEndpoint({ endpointId: "c", kind: "context", threadId, handle: () => "ctx" });
  a.close();
});

test("P-SDK-15 P-SDK-16 endpoint callbacks stay volatile; a reconnect re-registers the same endpoint identity", async (t) => {
  const h = await startHarness(t);
  const proxy = await startTcpProxy(Number(new URL(h.url).port));
  t.after(() => proxy.close());
  const a = await connect(proxy.url, TOKENS.appA);
  const threadId = String((await a.createThread({ ...CREATE, binding: { toolEndpoints: ["tools-1"] } })).threadId);
  await a.registerEndpoint({ endpointId: "tools-1", kind: "tools", tools: { x: tool(() => "first") } });
  const before = h.protocol.endpoints.get(A, "tools-1")?.connectionId;
  proxy.cut();
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const now = h.protocol.endpoints.get(A, "tools-1")?.connectionId;
    if (now !== undefined && now !== before) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.notEqual(h.protocol.endpoints.get(A, "tools-1")?.connectionId, before);
  assert.deepEqual(await h.protocol.endpoints.invokeTool(A, threadId, "x", {}, 5000), { ok: true, value: "first" });
  const row = h.store.handle.db.prepare("SELECT binding, config FROM threads WHERE thread_id = ?").get(threadId) as { binding: string; config: string };
  assert.deepEqual(JSON.parse(row.binding), { applicationRef: null, contextSources: [], toolEndpoints: ["tools-1"] });
  assert.ok(!row.config.includes("tools-1"));
  a.close();
});
