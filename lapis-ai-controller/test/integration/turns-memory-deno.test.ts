// Memory recall and the read tools with `serve` under Deno 2.9 (the
// production runtime), the scripted ACP agent as provider and MCP client:
// one turn gets the recalled entry ahead of its prompt and calls
// memory_search through the bridge. P-MEM-02, P-ARC-21.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { MemoryCandidate } from "../../src/client.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { engineServe, readDb, waitTurn } from "../support/engine-serve.ts";
import { tempDir } from "../support/temp.ts";

const cand = (id: string, text: string): MemoryCandidate =>
  ({ id, text, score: 1, updatedAt: "2026-03-04T05:06:07Z", sources: [{ ref: `vault/${id}.md`, sha256: "f".repeat(64) }], origin: "ingest" });

test("P-MEM-02 P-ARC-21 under Deno: recall renders ahead of the prompt and memory_search answers through the bridge", async (t) => {
  const dir = tempDir(t, "aic-memdeno-");
  const agent = scriptedAgent({ steps: [{ mcp: { calls: [{ name: "memory_search", args: { query: "deno" } }] } }, { say: "ok" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 1, {}, "deno");
  await serve.start();
  const c = await serve.client();
  t.after(() => c.close());
  const threadId = String((await c.createThread({ workspace: "ws-1", provider: "scripted", config: { approvalPolicy: "allow-all" } })).threadId);
  await c.registerEndpoint({ endpointId: "mem", kind: "memory", threadId, memory: { recall: () => [cand("d-1", "DENO-RECALLED")], search: () => [cand("d-2", "DENO-SEARCHED")] } });
  const turnId = String((await c.submitTurn(threadId, { text: "USER-PROMPT-DENO" })).turnId);
  assert.equal((await waitTurn(c, turnId, ["completed", "failed"], 30_000)).state, "completed");
  const log = agent.log();
  const prompt = String(log.find((e) => e.event === "prompt")?.text ?? "");
  assert.ok(prompt.indexOf("DENO-RECALLED") >= 0 && prompt.indexOf("DENO-RECALLED") < prompt.indexOf("USER-PROMPT-DENO"));
  assert.deepEqual(log.find((e) => e.event === "mcp_list")?.tools, ["memory_search", "memory_read"]);
  const call = log.find((e) => e.event === "mcp_call");
  assert.equal(call?.isError, false);
  assert.match(String(call?.text), /DENO-SEARCHED/);
  const ids = readDb<{ metadata: string }>(serve.databasePath, "SELECT metadata FROM journal WHERE turn_id = ? AND kind = 'memory_rendered'", turnId).map((r) => JSON.parse(r.metadata).memoryId);
  assert.deepEqual(ids, ["d-1"]);
});
