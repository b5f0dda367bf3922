// The external MCP resolver over a real endpoint registry: a thread's stored
// endpoint ids are read in its owner's scope at each setup; a gone endpoint,
// a restricted thread, another kind or thread, or one server name twice fail
// before anything launches. The ACP executor passes them as stdio servers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applicationMcpResolver, type McpThread } from "../../../src/capture/mcp-port.ts";
import { EndpointRegistry, type EndpointRegistration } from "../../../src/domain/endpoint-registration.ts";
import { AcpExecutor } from "../../../src/execution/acp-executor.ts";
import { currentLaunchHost } from "../../../src/execution/acp-launch.ts";
import { scriptedAgent } from "../../support/scripted-agent-fixture.ts";

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
  assert.deepEqual(resolve("t1"), { ok: true, launches: [launch("a"), launch("b")], sources: ["alice\u0000notes\u0000a", "alice\u0000notes\u0000b"] });
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

test("P-PRV-22 ACP agents get the descriptions as stdio MCP servers in session/new, env values from the allowlist and grants; a refusing agent is mcp_unsupported; env problems and a gone endpoint fail before any launch", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "aic-mcp-acp-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  let answer: ReturnType<ReturnType<typeof applicationMcpResolver>> = { ok: true, launches: [{ ...launch("x"), args: ["--flag"], envVars: ["GRANTED", "HOST_KEY"] }] };
  const executor = (stdioMcp: "accept" | "refuse") => {
    const agent = scriptedAgent({ stdioMcp, steps: [{ say: "ok" }] }, `acp-${stdioMcp}`, dir);
    return { agent, ex: new AcpExecutor({
      providers: [{ ...agent.provider, envAllowlist: ["HOST_KEY"] }],
      host: currentLaunchHost(), env: { HOST_KEY: "host-value", PATH: process.env.PATH }, tmpRoot: dir, mcp: () => answer,
    }) };
  };
  const setup = (providerId: string, envGrants: Record<string, string> = { GRANTED: "granted-value" }) =>
    ({ sessionKey: `t1:${providerId}`, threadId: "t1", providerId, cwd: dir, restricted: false, requestedMode: null, vcsIdentity: null, envGrants });
  const ok = executor("accept");
  t.after(() => ok.ex.close());
  const prepared = await ok.ex.prepare(setup("acp-accept"));
  assert.equal(prepared.ok, true);
  assert.deepEqual(ok.agent.log().find((e) => e.event === "mcp_stdio")?.servers, [{ name: "x", command: "/bin/srv", args: ["--flag"], env: ["GRANTED:13", "HOST_KEY:10"] }]);
  const refusing = executor("refuse");
  t.after(() => refusing.ex.close());
  assert.deepEqual(await refusing.ex.prepare(setup("acp-refuse")), { ok: false, code: "mcp_unsupported" });
  // Before any launch: a listed name without a value, and a gone endpoint.
  const before = refusing.ex.spawnCount;
  assert.deepEqual(await refusing.ex.prepare(setup("acp-refuse", {})), { ok: false, code: "mcp_env_unavailable" });
  answer = { ok: false, code: "endpoint_disconnected" };
  assert.deepEqual(await refusing.ex.prepare(setup("acp-refuse")), { ok: false, code: "endpoint_disconnected" });
  assert.equal(refusing.ex.spawnCount, before);
});
