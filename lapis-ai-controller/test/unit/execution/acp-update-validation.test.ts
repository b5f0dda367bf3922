// What an agent sends as session/update is refused by the ACP SDK's schema
// (zSessionNotification) before the executor translates it. The controller's
// handler does not parse a second time (execution/acp-session.ts): the
// session router that `acp.client()` installs ahead of every app handler
// parses each update and a refused one stops there. These cases pass the
// translator's own field checks, so only that parse keeps them out.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AcpExecutor } from "../../../src/execution/acp-executor.ts";
import { AcpEventTranslator } from "../../../src/execution/acp-events.ts";
import { currentLaunchHost } from "../../../src/execution/acp-launch.ts";
import type { ExecutorEvent, SessionSetup } from "../../../src/execution/executor.ts";
import { scriptedAgent, tempForProcess } from "../../support/scripted-agent-fixture.ts";

// Each is refused by the SDK's schema: a tool call without its required title, a chunk without content,
// a mode update naming no mode, an update kind the protocol does not have.
const REFUSED: Record<string, unknown>[] = [
  { sessionUpdate: "tool_call", toolCallId: "tc-smuggled", kind: "execute", status: "in_progress" },
  { sessionUpdate: "agent_message_chunk", messageId: "m-smuggled" },
  { sessionUpdate: "tool_call", toolCallId: "tc-smuggled-2", title: 42 },
];

test("P-PRF-06 the translator alone would turn each refused update into events (so the case proves the schema's refusal)", () => {
  const t = new AcpEventTranslator();
  const events = REFUSED.flatMap((u) => t.translate(u as { sessionUpdate: string }));
  assert.ok(events.some((e) => e.type === "tool_begin"), "a tool call without a title would begin a tool");
  assert.ok(t.finish().some((e) => e.type === "message_completed" && e.messageId === "m-smuggled"), "a chunk without content would open a message");
});

test("P-PRF-06 P-PRV-03 session/update frames the ACP schema refuses never reach the turn, and the valid ones around them do", async () => {
  const steps = [{ say: "before", messageId: "m1" }, ...REFUSED.map((rawUpdate) => ({ rawUpdate })), { say: " after", messageId: "m1" }];
  const agent = scriptedAgent({ steps });
  const ex = new AcpExecutor({ providers: [agent.provider], host: currentLaunchHost(), env: process.env, tmpRoot: agent.dir });
  try {
    const setup: SessionSetup = { sessionKey: "t1:scripted", providerId: "scripted", cwd: tempForProcess("ctl-ws-"), restricted: false, requestedMode: null, vcsIdentity: null, envGrants: {} };
    const prepared = await ex.prepare(setup);
    assert.equal(prepared.ok, true);
    if (!prepared.ok) return;
    const events: ExecutorEvent[] = [];
    const outcome = await prepared.session.dispatch("hi", { event: (e) => events.push(e), permission: async () => ({ outcome: "cancelled" }) });
    assert.deepEqual(outcome, { kind: "stopped", stopReason: "end_turn" });
    assert.deepEqual(events.map((e) => (e.type === "text" ? `t:${e.messageId}:${e.text}` : e.type === "message_completed" ? `done:${e.messageId}` : e.type)),
      ["t:m1:before", "t:m1: after", "done:m1"]);
  } finally {
    await ex.close();
  }
});
