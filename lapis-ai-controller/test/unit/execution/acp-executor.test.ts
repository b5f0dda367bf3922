// AcpExecutor against the scripted ACP agent (a real ACP peer over stdio).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { AcpExecutor } from "../../../src/execution/acp-executor.ts";
import { currentLaunchHost } from "../../../src/execution/acp-launch.ts";
import type { ExecutorEvent, PermissionAsk, PermissionDecision, SessionSetup } from "../../../src/execution/executor.ts";
import type { AgentScript } from "../../support/scripted-acp-agent.ts";
import { scriptedAgent, tempForProcess, type ScriptedAgent } from "../../support/scripted-agent-fixture.ts";

function setup(over: Partial<SessionSetup> = {}): SessionSetup {
  return { sessionKey: "t1:scripted", providerId: "scripted", cwd: tempForProcess("ctl-ws-"), restricted: false, requestedMode: null, vcsIdentity: null, envGrants: {}, ...over };
}

async function withExecutor(script: AgentScript, fn: (ex: AcpExecutor, agent: ScriptedAgent) => Promise<void>): Promise<void> {
  const agent = scriptedAgent(script);
  const ex = new AcpExecutor({ providers: [agent.provider], host: currentLaunchHost(), env: process.env, tmpRoot: agent.dir });
  try { await fn(ex, agent); } finally { await ex.close(); }
}

async function runTurn(ex: AcpExecutor, s: SessionSetup, prompt: string, decide: (a: PermissionAsk) => Promise<PermissionDecision> = async (a) => ({ outcome: "selected", optionId: a.options[0]?.optionId ?? "" })) {
  const prepared = await ex.prepare(s);
  assert.equal(prepared.ok, true);
  if (!prepared.ok) throw new Error("unreachable");
  const events: ExecutorEvent[] = [];
  const asks: PermissionAsk[] = [];
  const outcome = await prepared.session.dispatch(prompt, { event: (e) => events.push(e), permission: (a) => { asks.push(a); return decide(a); } });
  return { session: prepared.session, events, asks, outcome };
}

test("P-ARC-02 native mode applied when the agent accepts session/set_mode", async () => {
  await withExecutor({ modes: "advertise" }, async (ex, agent) => {
    const r = await runTurn(ex, setup({ requestedMode: "workspace-write" }), "hi");
    assert.deepEqual(r.session.nativeMode, { requested: "workspace-write", result: "applied", current: "workspace-write" });
    assert.ok(agent.log().some((e) => e.event === "set_mode" && e.modeId === "workspace-write"));
  });
});

test("P-ARC-02 native mode unsupported when the mode is not advertised (no set_mode sent)", async () => {
  await withExecutor({ modes: "advertise", modeIds: ["read-only", "agent"] }, async (ex, agent) => {
    const r = await runTurn(ex, setup({ requestedMode: "workspace-write" }), "hi");
    assert.deepEqual(r.session.nativeMode, { requested: "workspace-write", result: "unsupported", current: "read-only" });
    assert.equal(agent.log().filter((e) => e.event === "set_mode").length, 0);
  });
});

test("P-ARC-02 P-ARC-03 native mode rejected on -32602 and the requested mode is never shown as current", async () => {
  await withExecutor({ modes: "advertise", setMode: "reject" }, async (ex) => {
    const r = await runTurn(ex, setup({ requestedMode: "workspace-write" }), "hi");
    assert.deepEqual(r.session.nativeMode, { requested: "workspace-write", result: "rejected", current: "read-only" });
  });
});

test("P-ARC-02 native mode unreported when the agent has no modes", async () => {
  await withExecutor({ modes: "absent" }, async (ex) => {
    const r = await runTurn(ex, setup({ requestedMode: "workspace-write" }), "hi");
    assert.deepEqual(r.session.nativeMode, { requested: "workspace-write", result: "unreported", current: null });
  });
});

test("P-PRV-03 thought chunks become reasoning, separate from the authored reply", async () => {
  await withExecutor({ steps: [{ think: "pondering", messageId: "r1" }, { say: "answer", messageId: "m1" }] }, async (ex) => {
    const r = await runTurn(ex, setup(), "hi");
    const text = r.events.filter((e) => e.type === "text").map((e) => (e as { text: string }).text).join("");
    const reasoning = r.events.filter((e) => e.type === "reasoning").map((e) => (e as { text: string }).text).join("");
    assert.equal(text, "answer");
    assert.equal(reasoning, "pondering");
    assert.deepEqual(r.outcome, { kind: "stopped", stopReason: "end_turn" });
  });
});

test("P-PRV-06 message ids and completion markers are kept", async () => {
  await withExecutor({ steps: [{ say: "a", messageId: "m1" }, { say: "b", messageId: "m1" }, { say: "c", messageId: "m2" }] }, async (ex) => {
    const r = await runTurn(ex, setup(), "hi");
    const seq = r.events.map((e) => (e.type === "text" ? `t:${e.messageId}:${e.text}` : e.type === "message_completed" ? `done:${e.messageId}` : e.type));
    assert.deepEqual(seq, ["t:m1:a", "t:m1:b", "done:m1", "t:m2:c", "done:m2"]);
  });
});

test("P-CAP-06 P-CAP-07 tool_call plus two tool_call_update frames give one merged begin/end pair", async () => {
  const steps = [
    { tool: { id: "tc1", title: "Run", kind: "execute", rawInput: { command: ["echo", "hi"] } } },
    { toolUpdate: { id: "tc1", status: "in_progress", locations: [{ path: "/w/a.txt" }] } },
    { toolUpdate: { id: "tc1", status: "completed" } },
  ];
  await withExecutor({ steps }, async (ex) => {
    const r = await runTurn(ex, setup(), "hi");
    const tools = r.events.filter((e) => e.type === "tool_begin" || e.type === "tool_end");
    assert.equal(tools.length, 2);
    assert.deepEqual(tools[1], { type: "tool_end", settled: true, envelope: { toolCallId: "tc1", title: "Run", kind: "execute", status: "completed", locations: ["/w/a.txt"], command: "echo hi" } });
  });
});

test("P-PRV-18 unknown agent requests get -32601 and the turn goes on", async () => {
  await withExecutor({ steps: [{ unknownRequest: "x/unknown" }, { say: "after" }] }, async (ex, agent) => {
    const r = await runTurn(ex, setup(), "hi");
    assert.deepEqual(r.outcome, { kind: "stopped", stopReason: "end_turn" });
    assert.ok(r.events.some((e) => e.type === "unknown_request" && e.method === "x/unknown"));
    assert.ok(agent.log().some((e) => e.event === "unknown_error" && e.code === -32601));
  });
});

test("P-TRN-10 permission settlement answers with the exact option id", async () => {
  const options = [{ optionId: "opt-a#1", kind: "allow_once" }, { optionId: "opt-b#2", kind: "reject_once" }];
  await withExecutor({ steps: [{ permission: { toolCallId: "tc9", options } }] }, async (ex, agent) => {
    const r = await runTurn(ex, setup(), "hi", async () => ({ outcome: "selected", optionId: "opt-b#2" }));
    assert.equal(r.asks.length, 1);
    assert.equal(r.asks[0]?.category, "execution");
    assert.deepEqual(r.asks[0]?.options.map((o) => o.optionId), ["opt-a#1", "opt-b#2"]);
    const resp = agent.log().find((e) => e.event === "permission_response");
    assert.deepEqual(resp?.outcome, { outcome: "selected", optionId: "opt-b#2" });
  });
});

test("P-PRV-05 a changed vcsIdentity replaces the native session and the agent env carries it", async () => {
  await withExecutor({}, async (ex, agent) => {
    const cwd = tempForProcess("ctl-ws-");
    const a = await runTurn(ex, setup({ cwd, vcsIdentity: { name: "Ann", email: "ann@example.org" } }), "one");
    const b = await runTurn(ex, setup({ cwd, vcsIdentity: { name: "Ann", email: "ann@example.org" } }), "two");
    const c = await runTurn(ex, setup({ cwd, vcsIdentity: { name: "Bob", email: "bob@example.org" } }), "three");
    assert.equal(a.session.nativeSessionId, b.session.nativeSessionId);
    assert.notEqual(b.session.nativeSessionId, c.session.nativeSessionId);
    const spawns = agent.log().filter((e) => e.event === "spawn");
    assert.equal(spawns.length, 2);
    assert.equal((spawns[1]?.git as Record<string, string>).GIT_AUTHOR_EMAIL, "bob@example.org");
    assert.equal((spawns[1]?.git as Record<string, string>).GIT_COMMITTER_NAME, "Bob");
  });
});

test("P-PRV-19 restricted sessions run in read-only mode in an isolated cwd, one-shot", async () => {
  await withExecutor({ modes: "advertise", modeIds: ["agent", "read-only"] }, async (ex, agent) => {
    const ws = realpathSync(tempForProcess("ctl-ws-"));
    const r = await runTurn(ex, setup({ cwd: ws, restricted: true, requestedMode: "agent" }), "hi");
    assert.equal(r.session.nativeMode.result, "applied");
    assert.equal(r.session.nativeMode.current, "read-only");
    const created = agent.log().find((e) => e.event === "session_new");
    assert.notEqual(created?.cwd, ws);
    assert.equal(created?.mcpServers, 0);
    assert.equal(agent.log().filter((e) => e.event === "exit").length, 1);
    assert.equal(existsSync(String(created?.cwd)), false, "the isolated cwd is removed with its agent");
  });
});

test("P-PRV-19 a restricted session on an agent without a read-only mode fails closed", async () => {
  await withExecutor({ modes: "absent" }, async (ex) => {
    const r = await ex.prepare(setup({ restricted: true }));
    assert.deepEqual(r, { ok: false, code: "restricted_mode_unavailable" });
  });
});

test("P-TRN-03 a missing agent executable is a setup failure value", async () => {
  const agent = scriptedAgent({});
  const ex = new AcpExecutor({ providers: [{ ...agent.provider, launch: { command: ["/nonexistent/agent-bin"] } }], host: currentLaunchHost(), env: process.env, tmpRoot: agent.dir });
  try { assert.deepEqual(await ex.prepare(setup()), { ok: false, code: "provider_setup_failed" }); } finally { await ex.close(); }
});

test("P-TRN-03 an agent crashing at start is a setup failure value", async () => {
  await withExecutor({ crashAtStart: 3 }, async (ex) => {
    const r = await ex.prepare(setup());
    assert.equal(r.ok, false);
  });
});

test("P-API-10 the executor inputs carry no session, scope or token fields", () => {
  const keys = Object.keys(setup()).sort();
  assert.deepEqual(keys, ["cwd", "envGrants", "providerId", "requestedMode", "restricted", "sessionKey", "vcsIdentity"]);
  for (const k of keys) assert.doesNotMatch(k, /auth|scope|token|principal|bearer/i);
});

test("P-TRN-03 a provider's first setups run one at a time: the second agent starts only after the first session exists", async () => {
  await withExecutor({ modes: "absent" }, async (ex, agent) => {
    const results = await Promise.all([1, 2, 3].map((i) => ex.prepare(setup({ sessionKey: `t${i}:scripted` }))));
    assert.ok(results.every((r) => r.ok), "every concurrent first setup succeeds");
    const events = agent.log().map((e) => e.event);
    assert.ok(events.indexOf("session_new") < events.indexOf("spawn", events.indexOf("spawn") + 1), `first session before the second spawn: ${events.join(",")}`);
    assert.equal(ex.spawnCount, 3);
  });
});
