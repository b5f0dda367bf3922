// The application-tool bridge and the capture port, driven by a real MCP
// client over loopback HTTP, with the real endpoint registry. The "application"
// side is each test's endpoint call function. AIC-API-004d, P-API-08,
// P-ARC-23, P-CAP-01..04, P-PRV-19.
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import { applicationToolHost } from "../../../src/capture/capture-port.ts";
import { EndpointRegistry, type EndpointCall } from "../../../src/domain/endpoint-registration.ts";
import { ToolBridge } from "../../../src/execution/tool-bridge.ts";
import { connectBridge } from "../../support/mcp-client.ts";
import { definitionsOf } from "../../support/tool-spec.ts";

const A = { principal: "alice", application: "notes" };
const B = { principal: "bob", application: "mail" };

async function setup(t: TestContext) {
  const registry = new EndpointRegistry(16);
  const bridge = await ToolBridge.start(applicationToolHost(() => registry, 2_000));
  t.after(() => bridge.close());
  return { registry, bridge };
}

function endpoint(registry: EndpointRegistry, owner: typeof A, endpointId: string, threadId: string, tools: string[], call: EndpointCall, extra: { capture?: boolean; readOnlyTools?: string[]; connectionId?: string } = {}) {
  const r = registry.register({ ...owner, endpointId, connectionId: extra.connectionId ?? `conn-${owner.principal}`, kind: "tools", threadId, tools, toolDefinitions: definitionsOf(tools), capture: extra.capture ?? false, readOnlyTools: extra.readOnlyTools ?? [] }, call);
  assert.ok(r.ok);
}

test("AIC-API-004d P-API-08 B's bridge session cannot see or call A's tool; A's handler count stays 0; unknown bearer is refused", async (t) => {
  const { registry, bridge } = await setup(t);
  const calls = { a: 0, b: 0 };
  endpoint(registry, A, "ta", "thread-a", ["x"], async () => { calls.a++; return { ok: true, value: "A" }; });
  endpoint(registry, B, "tb", "thread-b", ["x"], async () => { calls.b++; return { ok: true, value: "B" }; });
  const gb = bridge.grant({ ...B, threadId: "thread-b" });
  const gbOnA = bridge.grant({ ...B, threadId: "thread-a" });
  assert.ok(gb && gbOnA);
  const mb = await connectBridge(gb.server.url, gb.server.headers);
  t.after(() => mb.close());
  assert.deepEqual(await mb.listTools(), ["x"]);
  assert.deepEqual(await mb.callTool("x", {}), { isError: false, text: "B" });
  // B bound to A's thread id still only reaches B's own registrations (keyed by principal + application).
  const mOnA = await connectBridge(gbOnA.server.url, gbOnA.server.headers);
  t.after(() => mOnA.close());
  assert.deepEqual(await mOnA.listTools(), []);
  assert.deepEqual(await mOnA.callTool("x", {}), { isError: true, text: "tool_not_found" });
  assert.equal(calls.a, 0);
  await assert.rejects(connectBridge(gb.server.url, [{ name: "Authorization", value: "Bearer not-a-grant" }]));
});

test("P-ARC-23 disposal and grant revocation take effect at once", async (t) => {
  const { registry, bridge } = await setup(t);
  let calls = 0;
  endpoint(registry, A, "ta", "thread-a", ["x"], async () => { calls++; return { ok: true, value: "A" }; });
  const g = bridge.grant({ ...A, threadId: "thread-a" });
  assert.ok(g);
  const m = await connectBridge(g.server.url, g.server.headers);
  t.after(() => m.close());
  assert.equal((await m.callTool("x", {})).text, "A");
  assert.ok(registry.dispose(A, "ta"));
  assert.deepEqual(await m.listTools(), []);
  assert.deepEqual(await m.callTool("x", {}), { isError: true, text: "tool_not_found" });
  endpoint(registry, A, "ta", "thread-a", ["x"], async () => { calls++; return { ok: true, value: "A" }; });
  g.revoke();
  await assert.rejects(m.callTool("x", {}));
  assert.equal(calls, 1);
});

test("P-CAP-01 P-CAP-02 a mutating tool runs only after the capture begin ack and is followed by finish; a rejected begin stops it", async (t) => {
  const { registry, bridge } = await setup(t);
  const order: string[] = [];
  let ack = true;
  endpoint(registry, A, "ta", "thread-a", ["write"], async (operation) => {
    order.push(operation);
    if (operation === "capture.begin") { await new Promise((r) => setTimeout(r, 500)); order.push("ack"); return { ok: true, value: { ack } }; }
    return { ok: true, value: operation === "tool" ? "written" : null };
  }, { capture: true });
  const g = bridge.grant({ ...A, threadId: "thread-a" });
  assert.ok(g);
  const m = await connectBridge(g.server.url, g.server.headers);
  t.after(() => m.close());
  assert.deepEqual(await m.callTool("write", {}), { isError: false, text: "written" });
  assert.deepEqual(order, ["capture.begin", "ack", "tool", "capture.finish"]);
  ack = false;
  order.length = 0;
  assert.deepEqual(await m.callTool("write", {}), { isError: true, text: "capture_rejected" });
  assert.deepEqual(order, ["capture.begin", "ack"], "the tool did not run");
});

test("P-CAP-03 a read-only tool runs even when capture rejects", async (t) => {
  const { registry, bridge } = await setup(t);
  const order: string[] = [];
  endpoint(registry, A, "ta", "thread-a", ["read"], async (operation) => {
    order.push(operation);
    return operation === "capture.begin" ? { ok: false, error: { code: "capture_rejected", retryable: false } } : { ok: true, value: "content" };
  }, { capture: true, readOnlyTools: ["read"] });
  const g = bridge.grant({ ...A, threadId: "thread-a" });
  assert.ok(g);
  const m = await connectBridge(g.server.url, g.server.headers);
  t.after(() => m.close());
  assert.deepEqual(await m.callTool("read", {}), { isError: false, text: "content" });
  assert.deepEqual(order, ["capture.begin", "tool", "capture.finish"]);
});

test("P-CAP-04 the capture owner disconnecting mid-begin fences the mutating tool: endpoint_disconnected, the tool never runs", async (t) => {
  const { registry, bridge } = await setup(t);
  const order: string[] = [];
  endpoint(registry, A, "ta", "thread-a", ["write"], (operation) => {
    order.push(operation);
    if (operation === "capture.begin") {
      setTimeout(() => registry.disposeConnection("conn-alice"), 50);
      return new Promise(() => {});
    }
    return Promise.resolve({ ok: true, value: "written" });
  }, { capture: true });
  const g = bridge.grant({ ...A, threadId: "thread-a" });
  assert.ok(g);
  const m = await connectBridge(g.server.url, g.server.headers);
  t.after(() => m.close());
  assert.deepEqual(await m.callTool("write", {}), { isError: true, text: "endpoint_disconnected" });
  assert.deepEqual(order, ["capture.begin"]);
});

test("AIC-TOOL-03 arguments nested deeper than the bridge's limit answer invalid_params: json_too_deep; the tool never runs", async (t) => {
  const { registry, bridge } = await setup(t);
  let calls = 0;
  endpoint(registry, A, "ta", "thread-a", ["x"], async () => { calls++; return { ok: true, value: "ran" }; });
  const g = bridge.grant({ ...A, threadId: "thread-a" });
  assert.ok(g);
  const m = await connectBridge(g.server.url, g.server.headers);
  t.after(() => m.close());
  const nest = (n: number): Record<string, unknown> => {
    let v: unknown = 1;
    for (let i = 0; i < n; i++) v = [v];
    return { v };
  };
  assert.deepEqual(await m.callTool("x", nest(62)), { isError: false, text: "ran" });
  assert.deepEqual(await m.callTool("x", nest(200)), { isError: true, text: "invalid_params: json_too_deep" });
  assert.equal(calls, 1);
  const strict = await ToolBridge.start(applicationToolHost(() => registry, 2_000), { maxBodyBytes: 1024 * 1024, maxGrants: 4, maxArgumentDepth: 4 });
  t.after(() => strict.close());
  const gs = strict.grant({ ...A, threadId: "thread-a" });
  assert.ok(gs);
  const ms = await connectBridge(gs.server.url, gs.server.headers);
  t.after(() => ms.close());
  assert.deepEqual(await ms.callTool("x", nest(2)), { isError: false, text: "ran" });
  assert.deepEqual(await ms.callTool("x", nest(4)), { isError: true, text: "invalid_params: json_too_deep" });
});
