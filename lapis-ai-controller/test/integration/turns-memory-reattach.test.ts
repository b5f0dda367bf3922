// A reconnect reattaches a thread binding the way an application expects
// (P-SDK-16): the SDK re-registers the thread's memory endpoint under the same
// identity before it reattaches, as it does the context sources the binding
// declares, so the next turn on the reattached thread recalls again, from the
// same endpoint id, and the dropped connection's registration serves nothing.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ControllerClient, type MemoryCandidate } from "../../src/client.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { ENGINE_TOKENS, engineServe, waitTurn } from "../support/engine-serve.ts";
import { startTcpProxy } from "../support/tcp-proxy.ts";
import { tempDir } from "../support/temp.ts";

const cand = (id: string, text: string): MemoryCandidate => ({ id, text, score: 1, updatedAt: "2026-03-04T05:06:07Z", sources: [], origin: "recall" });

test("P-SDK-16 P-ARC-23 P-MEM-02 after a reconnect the reattached thread recalls from its memory endpoint, re-registered under the same identity, beside its context source", async (t) => {
  const dir = tempDir(t, "aic-memreattach-");
  const agent = scriptedAgent({ steps: [{ say: "ok", messageId: "m1" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 1, { contextDeadlineMs: 3_000 });
  await serve.start();
  const proxy = await startTcpProxy(Number(new URL(serve.url).port));
  t.after(() => proxy.close());
  const tk = ENGINE_TOKENS.find((x) => x.id === "alice");
  assert.ok(tk !== undefined);
  const c = await ControllerClient.connect({ url: proxy.url, credential: { type: "token", token: tk.value }, requestTimeoutMs: 10_000 });
  t.after(() => c.close());
  const prompts = () => agent.log().filter((e) => e.event === "prompt").map((e) => String(e.text));
  const threadId = String((await c.createThread({ workspace: "ws-1", provider: "scripted", config: { approvalPolicy: "allow-all" }, binding: { contextSources: ["ctx"] } })).threadId);
  const asked: string[] = [];
  await c.registerEndpoint({ endpointId: "ctx", kind: "context", threadId, handle: () => ({ context: "CONTEXT-BLOCK" }) });
  await c.registerEndpoint({ endpointId: "mem", kind: "memory", threadId, memory: { recall: (r) => { asked.push(r.turnId); return [cand("user/ep-1", "REATTACH-MEMORY")]; } } });
  const run = async (text: string) => {
    const turnId = String((await c.submitTurn(threadId, { text })).turnId);
    assert.equal((await waitTurn(c, turnId, ["completed", "failed"], 20_000)).state, "completed");
    return { turnId, prompt: prompts().find((p) => p.includes(text)) ?? "", view: await c.turns.get(turnId) };
  };

  const before = await run("PROMPT-BEFORE");
  assert.ok(before.prompt.includes("REATTACH-MEMORY") && before.prompt.includes("CONTEXT-BLOCK"));
  const connections = proxy.accepted;
  proxy.cut();
  const end = Date.now() + 10_000;
  while (proxy.accepted === connections) {
    if (Date.now() > end) throw new Error("no reconnect");
    await new Promise((r) => setTimeout(r, 20));
  }
  const after = await run("PROMPT-AFTER");
  assert.ok(after.prompt.includes("REATTACH-MEMORY") && after.prompt.includes("CONTEXT-BLOCK"), after.prompt);
  assert.deepEqual(asked, [before.turnId, after.turnId], "asked once per turn, on the new connection");
  assert.equal(after.view.memory?.endpointId, "mem", "the same endpoint identity");
  assert.deepEqual(after.view.memory?.rendered.map((m) => m.memoryId), ["user/ep-1"]);
  assert.equal(proxy.accepted, connections + 1);
});
