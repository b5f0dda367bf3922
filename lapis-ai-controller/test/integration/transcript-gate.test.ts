// The tool-call gate of a consumer transcript store: before an application
// tool call reaches its handler, the thread's store must hold every entry
// committed so far. A store that refuses or does not answer in time at that
// point means the tool is never called; the agent gets only an error code.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Transcript } from "../../src/contracts.ts";
import { engineServe } from "../support/engine-serve.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { tempDir } from "../support/temp.ts";
import { tool } from "../support/tool-spec.ts";

const never = { replay: (): Transcript => ({ threadId: "unused", events: [] }) };

test("P-ARC-24 a refused or late transcript append before a tool call means the tool is never called", { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t, "aic-transcript-gate-");
  // The agent reports a step before calling, so the store has new entries to take before the call.
  const agent = scriptedAgent({ steps: [
    { say: "calling the tool", messageId: "m0" }, { tool: { id: "t1", title: "lapis-app-tools/note", kind: "other" } }, { sleep: 300 },
    { mcp: { calls: [{ name: "note", args: { text: "x" } }] } }, { say: "after the call", messageId: "m1" },
  ] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 3, { transcriptDeadlineMs: 800 });
  await serve.start();
  const c = await serve.client();
  t.after(() => c.close());
  let called = 0;
  const cases: { name: string; appendAfterFirst: () => Promise<void> }[] = [
    { name: "refused", appendAfterFirst: () => Promise.reject(new Error("disk full")) },
    { name: "late", appendAfterFirst: () => new Promise<void>(() => {}) },
    { name: "accepted", appendAfterFirst: () => Promise.resolve() },
  ];
  for (const [i, k] of cases.entries()) {
    const { threadId } = await c.threads.create({ workspace: `ws-${i + 1}`, provider: "scripted", config: { approvalPolicy: "allow-all", title: null }, binding: { toolEndpoints: [`tools-${k.name}`] } });
    await c.registerEndpoint({ endpointId: `tools-${k.name}`, kind: "tools", threadId, tools: { note: tool(() => { called++; return "noted"; }) } });
    let appends = 0;
    // Appends before dispatch land; the one carrying the agent's output, the one before the tool call, behaves as the case says.
    await c.registerEndpoint({ endpointId: `store-${k.name}`, kind: "transcript", threadId, transcript: { ...never, append: ({ transcript }) => {
      appends++;
      return transcript.events.some((e) => e.kind === "text") ? k.appendAfterFirst() : Promise.resolve();
    } } });
    const before = called;
    const { turnId } = await c.turns.submit(threadId, { text: "call the tool" });
    await c.turns.wait(turnId, { timeoutMs: 60_000 });
    assert.ok(appends >= 2, `${k.name}: the store was asked again before the tool call`);
    const results = agent.log().filter((e) => e.event === "mcp_call");
    const result = results[results.length - 1];
    if (k.name === "accepted") {
      assert.equal(called, before + 1, "an accepted append lets the call through");
      assert.equal(result?.isError, false);
    } else {
      assert.equal(called, before, `${k.name}: the tool was never called`);
      assert.equal(result?.isError, true, `${k.name}: the agent got an error`);
      assert.ok(!String(result?.text).includes("noted"));
    }
  }
});

test("P-ARC-26 a turn's own entries reach the store when the turn ends, before its outcome is seen; a store refusing them fails the turn", { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t, "aic-transcript-end-");
  const agent = scriptedAgent({ steps: [{ say: "the answer", messageId: "m1" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 2, { transcriptDeadlineMs: 800 });
  await serve.start();
  const c = await serve.client();
  t.after(() => c.close());
  // Held: when turns.wait answers `completed`, the store already has the turn's text, with no later dispatch.
  const held: Transcript["events"][number][] = [];
  const first = (await c.threads.create({ workspace: "ws-1", provider: "scripted" })).threadId;
  await c.registerEndpoint({ endpointId: "store-held", kind: "transcript", threadId: first, transcript: { ...never, append: ({ transcript }) => { held.push(...transcript.events); } } });
  const turn = await c.turns.submit(first, { text: "question" });
  const done = await c.turns.wait(turn.turnId, { timeoutMs: 60_000 });
  assert.equal(done.state, "completed");
  const heldText = held.filter((e) => e.turnId === turn.turnId && e.kind === "text");
  assert.equal(heldText.map((e) => (e.payload as { text: string }).text).join(""), "the answer");
  const seqs = held.map((e) => e.seq);
  assert.deepEqual(seqs, Array.from({ length: seqs.length }, (_, i) => i + 1), "contiguous, never resent");
  // Refused at the end: the turn does not complete; it fails with the store's code.
  const second = (await c.threads.create({ workspace: "ws-2", provider: "scripted" })).threadId;
  await c.registerEndpoint({ endpointId: "store-refusing", kind: "transcript", threadId: second, transcript: { ...never, append: ({ transcript }) => {
    if (transcript.events.some((e) => e.kind === "text")) throw new Error("disk full");
  } } });
  const refused = await c.turns.submit(second, { text: "question" });
  const ended = await c.turns.wait(refused.turnId, { timeoutMs: 60_000 });
  assert.equal(ended.state, "failed");
  assert.equal(ended.errorCode, "transcript_append_failed");
});

test("P-ARC-27 append progress survives a restart: after it the store gets the next entries, none twice and none skipped", { timeout: 180_000 }, async (t) => {
  const dir = tempDir(t, "aic-transcript-restart-");
  const agent = scriptedAgent({ steps: [{ say: "answer", messageId: "m1" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 1);
  await serve.start();
  const held = new Map<number, string>();
  const sent: number[] = [];
  // The application's store: seq is its idempotency key; everything sent is logged.
  const store = { ...never, append: ({ transcript }: { transcript: Transcript }) => {
    for (const e of transcript.events) { sent.push(e.seq); if (!held.has(e.seq)) held.set(e.seq, e.kind); }
  } };
  let c = await serve.client();
  const { threadId } = await c.threads.create({ workspace: "ws-1", provider: "scripted" });
  await c.registerEndpoint({ endpointId: "store-r", kind: "transcript", threadId, transcript: store });
  const first = await c.turns.submit(threadId, { text: "one" });
  assert.equal((await c.turns.wait(first.turnId, { timeoutMs: 60_000 })).state, "completed");
  const before = sent.length;
  assert.ok(before > 0);
  c.close();
  await serve.kill("SIGTERM");
  await serve.start();
  c = await serve.client();
  t.after(() => c.close());
  await c.threads.attach(threadId);
  await c.registerEndpoint({ endpointId: "store-r", kind: "transcript", threadId, transcript: store });
  const second = await c.turns.submit(threadId, { text: "two" });
  assert.equal((await c.turns.wait(second.turnId, { timeoutMs: 60_000 })).state, "completed");
  // Nothing sent twice across the restart, and the store holds every entry of the thread, contiguous.
  assert.deepEqual(sent, [...new Set(sent)], "no entry sent twice");
  const history = await c.threads.replayAll(threadId);
  // Everything up to the second turn's text (its end is committed after the store took the turn, P-ARC-26).
  const lastText = Math.max(...history.filter((e) => e.turnId === second.turnId && e.kind === "text").map((e) => e.seq));
  const keys = [...held.keys()].sort((a, b) => a - b);
  assert.deepEqual(keys, Array.from({ length: keys.length }, (_, i) => i + 1), "no gap");
  assert.ok(keys.length >= lastText, "the second turn's text is held");
  assert.ok(sent.length > before, "the second turn's entries were appended");
});
