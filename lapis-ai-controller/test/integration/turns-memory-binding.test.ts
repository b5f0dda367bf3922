// Memory endpoints bound like tool endpoints: a thread names the memory
// endpoint ids it recalls from (`binding.memoryEndpoints`); a turn prepared
// while the endpoint's connection is away waits for its re-registration
// within the context deadline, or records recall as unavailable. Black-box
// through the SDK against `serve` with the scripted ACP agent.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { MemoryCandidate } from "../../src/client.ts";
import { engineServe, readDb, waitTurn } from "../support/engine-serve.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { tempDir } from "../support/temp.ts";

const cand = (id: string, text: string): MemoryCandidate =>
  ({ id, text, score: 1, updatedAt: "2026-03-04T05:06:07Z", sources: [{ ref: `vault/${id}.md`, sha256: "b".repeat(64) }], origin: "ingest" });

test("P-MEM-24 a bound memory endpoint: a turn prepared during a reconnect waits for the re-registration, or records recall unavailable", { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t, "aic-memory-binding-");
  const agent = scriptedAgent({ steps: [{ say: "ok", messageId: "m1" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 3, { contextDeadlineMs: 2_000 });
  await serve.start();
  const c = await serve.client();
  t.after(() => c.close());
  const prompts = () => agent.log().filter((e) => e.event === "prompt").map((e) => String(e.text));
  const recalled = (turnId: string) => {
    const row = readDb<{ metadata: string }>(serve.databasePath, "SELECT metadata FROM journal WHERE turn_id = ? AND kind = 'memory_recalled'", turnId)[0];
    return row === undefined ? null : JSON.parse(row.metadata) as { code: string | null; endpointId: string };
  };
  const memory = (threadId: string) => ({ endpointId: "mem-b", kind: "memory" as const, threadId, memory: { recall: () => [cand("fact-1", "BOUND-RECALL-CANARY")] } });
  const run = async (threadId: string, text: string, meanwhile: () => Promise<void> = async () => {}) => {
    const turnId = String((await c.submitTurn(threadId, { text })).turnId);
    await meanwhile();
    assert.equal((await waitTurn(c, turnId, ["completed", "failed"], 30_000)).state, "completed");
    return { turnId, prompt: prompts().find((p) => p.includes(text)) ?? "" };
  };

  // Re-registered within the deadline: the turn waited and recalled.
  const first = String((await c.createThread({ workspace: "ws-1", provider: "scripted", binding: { memoryEndpoints: ["mem-b"] } })).threadId);
  const app = await serve.client();
  await app.registerEndpoint(memory(first));
  app.close();
  await new Promise((r) => setTimeout(r, 200));
  const back = await serve.client();
  t.after(() => back.close());
  const waited = await run(first, "PROMPT-AFTER-RECONNECT", async () => {
    await new Promise((r) => setTimeout(r, 500));
    await back.registerEndpoint(memory(first));
  });
  assert.match(waited.prompt, /BOUND-RECALL-CANARY/);
  assert.deepEqual(recalled(waited.turnId), { ...recalled(waited.turnId), code: null, endpointId: "mem-b" });

  // Never re-registered: the turn runs without memory and says recall was unavailable.
  const second = String((await c.createThread({ workspace: "ws-2", provider: "scripted", binding: { memoryEndpoints: ["mem-gone"] } })).threadId);
  const missed = await run(second, "PROMPT-WITHOUT-MEMORY");
  assert.doesNotMatch(missed.prompt, /recalled-memory/);
  assert.deepEqual(recalled(missed.turnId), { ...recalled(missed.turnId), code: "endpoint_disconnected", endpointId: "mem-gone" });

  // The binding is part of the thread: a reattachment must name it.
  const view = await c.threads.snapshot(first);
  assert.deepEqual(view.binding.memoryEndpoints, ["mem-b"]);
  // Unbound and without an endpoint: no memory and no record, as before.
  const third = String((await c.createThread({ workspace: "ws-3", provider: "scripted" })).threadId);
  assert.equal(recalled((await run(third, "PROMPT-UNBOUND")).turnId), null);
});
