// The external MCP resolver over a real endpoint registry: a thread's stored
// endpoint ids are read in its owner's scope at each setup; a gone endpoint,
// a restricted thread, another kind or thread, or one server name twice fail
// before anything launches. The ACP executor refuses descriptions outright.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applicationMcpResolver, type McpThread } from "../../../src/capture/mcp-port.ts";
import { EndpointRegistry, type EndpointRegistration } from "../../../src/domain/endpoint-registration.ts";
import { AcpExecutor } from "../../../src/execution/acp-executor.ts";
import { currentLaunchHost } from "../../../src/execution/acp-launch.ts";

const owner = { principal: "alice", application: "notes" };
const launch = (name: string) => ({ name, command: "/bin/srv", args: [], envVars: [], required: false });
function reg(endpointId: string, over: Partial<EndpointRegistration> = {}): EndpointRegistration {
  return { ...owner, endpointId, connectionId: "c1", kind: "mcp", threadId: "t1", tools: [], toolDefinitions: [], capture: false, mcpServers: [launch(endpointId)], ...over };
}

test("P-PRV-07 P-PRV-08 P-PRV-10 resolver: descriptions come only from the owner's live mcp endpoints named by the thread", () => {
  const registry = new EndpointRegistry(16);
  const threads = new Map<string, McpThread>([
    ["t1", { ...owner, restricted: false, mcpEndpoints: ["a", "b"] }],
    ["t2", { ...owner, restricted: true, mcpEndpoints: ["a"] }],
    ["t3", { ...owner, restricted: false, mcpEndpoints: [] }],
    ["t4", { principal: "bob", application: "notes", restricted: false, mcpEndpoints: ["a"] }],
  ]);
  const resolve = applicationMcpResolver(() => registry, (id) => threads.get(id) ?? null);
  const call = async () => ({ ok: true as const, value: null });
  assert.deepEqual(resolve("t3"), { ok: true, launches: [] });
  assert.deepEqual(resolve(undefined), { ok: true, launches: [] });
  assert.deepEqual(resolve("t1"), { ok: false, code: "endpoint_disconnected" });
  registry.register(reg("a"), call);
  registry.register(reg("b", { threadId: null }), call);
  assert.deepEqual(resolve("t1"), { ok: true, launches: [launch("a"), launch("b")] });
  assert.deepEqual(resolve("t2"), { ok: false, code: "mcp_restricted" });
  // Another owner never sees alice's endpoint.
  assert.deepEqual(resolve("t4"), { ok: false, code: "endpoint_disconnected" });
  registry.register(reg("b", { mcpServers: [launch("a")], threadId: null }), call);
  assert.deepEqual(resolve("t1"), { ok: false, code: "mcp_descriptor_invalid" });
  registry.register(reg("b", { kind: "context" }), call);
  assert.deepEqual(resolve("t1"), { ok: false, code: "endpoint_not_found" });
  registry.register(reg("b", { threadId: "t9" }), call);
  assert.deepEqual(resolve("t1"), { ok: false, code: "endpoint_not_found" });
  registry.register(reg("b"), call);
  assert.equal(registry.disposeConnection("c1"), 2);
  assert.deepEqual(resolve("t1"), { ok: false, code: "endpoint_disconnected" });
  assert.deepEqual(applicationMcpResolver(() => null, (id) => threads.get(id) ?? null)("t1"), { ok: false, code: "endpoint_disconnected" });
});

test("P-PRV-08 ACP providers get no external MCP descriptions: mcp_unsupported before any launch; a gone endpoint stays endpoint_disconnected", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "aic-mcp-acp-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  let answer: ReturnType<ReturnType<typeof applicationMcpResolver>> = { ok: true, launches: [launch("x")] };
  const ex = new AcpExecutor({
    providers: [{ id: "acp", envAllowlist: [], restrictedModes: [], setupTimeoutMs: 5_000, killGraceMs: 1_000, launch: { command: ["/nonexistent/agent-bin"] } }],
    host: currentLaunchHost(), env: {}, tmpRoot: dir, mcp: () => answer,
  });
  const setup = { sessionKey: "t1:acp", threadId: "t1", providerId: "acp", cwd: dir, restricted: false, requestedMode: null, vcsIdentity: null, envGrants: {} };
  assert.deepEqual(await ex.prepare(setup), { ok: false, code: "mcp_unsupported" });
  answer = { ok: false, code: "endpoint_disconnected" };
  assert.deepEqual(await ex.prepare(setup), { ok: false, code: "endpoint_disconnected" });
  assert.equal(ex.spawnCount, 0);
  await ex.close();
});
