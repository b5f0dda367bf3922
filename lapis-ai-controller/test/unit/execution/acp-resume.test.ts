// AcpExecutor reopening a thread's stored native session (issue 25 point 5)
// and giving application context ahead of the prompt (point 1), against the
// scripted ACP agent (a real ACP peer over stdio).
import { test } from "node:test";
import assert from "node:assert/strict";
import { AcpExecutor, sessionBindingKey } from "../../../src/execution/acp-executor.ts";
import { currentLaunchHost } from "../../../src/execution/acp-launch.ts";
import type { ExecutorEvent, SessionSetup } from "../../../src/execution/executor.ts";
import type { AgentScript } from "../../support/scripted-acp-agent.ts";
import { scriptedAgent, tempForProcess, type ScriptedAgent } from "../../support/scripted-agent-fixture.ts";

const CWD = tempForProcess("ctl-ws-");

function setup(over: Partial<SessionSetup> = {}): SessionSetup {
  return { sessionKey: "t1:scripted", providerId: "scripted", cwd: CWD, restricted: false, requestedMode: null, vcsIdentity: null, envGrants: {}, ...over };
}

async function withExecutor(script: AgentScript, fn: (ex: AcpExecutor, agent: ScriptedAgent) => Promise<void>): Promise<void> {
  const agent = scriptedAgent(script);
  const ex = new AcpExecutor({ providers: [agent.provider], host: currentLaunchHost(), env: process.env, tmpRoot: agent.dir });
  try { await fn(ex, agent); } finally { await ex.close(); }
}

async function prepared(ex: AcpExecutor, s: SessionSetup) {
  const r = await ex.prepare(s);
  if (!r.ok) throw new Error(`setup failed: ${r.code}`);
  return r;
}

const stored = (bindingKey: string | null = null) => ({ nativeSessionId: "stored-session-1", bindingKey });

test("P-ARC-19 a stored session is reopened with session/resume when the agent advertises it", async () => {
  await withExecutor({ resume: true, loadSession: true }, async (ex, agent) => {
    const r = await prepared(ex, setup({ resume: stored(sessionBindingKey(setup())) }));
    assert.deepEqual(r.continuity, { kind: "resumed", method: "session/resume" });
    assert.equal(r.session.nativeSessionId, "stored-session-1");
    assert.equal(r.bindingKey, sessionBindingKey(setup()));
    await r.session.dispatch("next turn", { event: () => {}, permission: async () => ({ outcome: "cancelled" }) });
    const log = agent.log();
    assert.ok(log.some((e) => e.event === "session_resume" && e.sessionId === "stored-session-1"));
    assert.equal(log.filter((e) => e.event === "session_new" || e.event === "session_load").length, 0);
    assert.ok(log.some((e) => e.event === "prompt" && e.sessionId === "stored-session-1"));
  });
});

test("P-ARC-19 an agent with only loadSession is reopened with session/load, and its history replay is not reported as turn events", async () => {
  await withExecutor({ loadSession: true }, async (ex, agent) => {
    const r = await prepared(ex, setup({ resume: stored() }));
    assert.deepEqual(r.continuity, { kind: "resumed", method: "session/load" });
    const events: ExecutorEvent[] = [];
    await r.session.dispatch("next turn", { event: (e) => events.push(e), permission: async () => ({ outcome: "cancelled" }) });
    assert.ok(agent.log().some((e) => e.event === "session_load" && e.sessionId === "stored-session-1"));
    assert.equal(JSON.stringify(events).includes("REPLAYED-HISTORY"), false);
  });
});

test("P-ARC-19 an agent that cannot resume gets a fresh session reported as reset resume_unsupported", async () => {
  await withExecutor({}, async (ex, agent) => {
    const r = await prepared(ex, setup({ resume: stored() }));
    assert.deepEqual(r.continuity, { kind: "reset", reason: "resume_unsupported" });
    assert.notEqual(r.session.nativeSessionId, "stored-session-1");
    assert.equal(agent.log().filter((e) => e.event === "session_new").length, 1);
  });
});

test("P-ARC-19 an agent refusing the stored id gets a fresh session reported as reset resume_failed", async () => {
  await withExecutor({ resume: true, reopen: "reject" }, async (ex, agent) => {
    const r = await prepared(ex, setup({ resume: stored() }));
    assert.deepEqual(r.continuity, { kind: "reset", reason: "resume_failed" });
    const log = agent.log();
    assert.ok(log.some((e) => e.event === "session_resume"));
    assert.equal(log.filter((e) => e.event === "session_new").length, 1);
  });
});

test("P-ARC-19 P-PRV-05 a changed vcsIdentity replaces the session without reopening it (reset session_binding_changed)", async () => {
  await withExecutor({ resume: true }, async (ex, agent) => {
    const before = sessionBindingKey(setup());
    const r = await prepared(ex, setup({ vcsIdentity: { name: "New Name", email: "new@example.org" }, resume: stored(before) }));
    assert.deepEqual(r.continuity, { kind: "reset", reason: "session_binding_changed" });
    assert.equal(agent.log().filter((e) => e.event === "session_resume").length, 0);
  });
});

test("P-ARC-19 no stored session: new; the live session of the next turn: continued", async () => {
  await withExecutor({ resume: true }, async (ex) => {
    const first = await prepared(ex, setup());
    assert.deepEqual(first.continuity, { kind: "new" });
    const again = await prepared(ex, setup({ resume: { nativeSessionId: first.session.nativeSessionId, bindingKey: first.bindingKey } }));
    assert.deepEqual(again.continuity, { kind: "continued" });
    assert.equal(again.session, first.session);
  });
});

test("P-SDK-02 context blocks reach the agent ahead of the prompt, each naming its source", async () => {
  await withExecutor({}, async (ex, agent) => {
    const r = await prepared(ex, setup());
    await r.session.dispatch("THE-PROMPT", { event: () => {}, permission: async () => ({ outcome: "cancelled" }) }, [
      { source: "ctx-a", text: "CONTEXT-A" },
      { source: "prep-b", text: "CONTEXT-B" },
    ]);
    const text = String(agent.log().find((e) => e.event === "prompt")?.text);
    assert.ok(text.indexOf("CONTEXT-A") < text.indexOf("CONTEXT-B") && text.indexOf("CONTEXT-B") < text.indexOf("THE-PROMPT"), text);
    assert.match(text, /<context source="ctx-a">/);
  });
});
