// The vault profile end to end through `serve` (issue 30): an application
// keeps memory in a folder of Markdown files and registers the vault as its
// memory endpoint; what it remembered while one thread ran is recalled into
// the agent's input in a new thread, with its provenance id; another
// principal never receives it; after forget it is gone and cannot be
// ingested back; the memory text never reaches the controller's database.
// The agent is the scripted ACP agent. P-ARC-20, P-MEM-01, P-MEM-04, P-API-09.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { vaultMemoryHandlers } from "../../src/memory/lapis/endpoint.ts";
import { engineServe, readDb, waitTurn } from "../support/engine-serve.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { tempDir } from "../support/temp.ts";
import { value, vaultSetup } from "../support/vault-memory.ts";

const FACT = "VAULT-FACT-7f3a: the user's editor is Helix.";

test("P-ARC-20 P-MEM-01 P-MEM-04 P-API-09 a vault memory over Markdown files, recalled in a new thread, isolated per principal, gone after forget", { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t, "aic-vault-serve-");
  const agent = scriptedAgent({ steps: [{ say: "ok", messageId: "m1" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 4, { contextDeadlineMs: 5_000, memoryMaxTokens: 400 });
  await serve.start();
  const alice = await serve.client("alice");
  const bob = await serve.client("bob");
  t.after(() => { alice.close(); bob.close(); });
  // The application's vault and its rule: each principal reads only its own partition.
  const { vault, root } = vaultSetup(t, { root: join(dir, "vault") });
  const handlers = vaultMemoryHandlers(vault, { partitions: (a) => (/^[a-z][a-z0-9-]{0,29}$/.test(a.principal) ? [`p-${a.principal}`] : []), budgetTokens: 300 });
  const prompts = () => agent.log().filter((e) => e.event === "prompt").map((e) => String(e.text));
  let n = 0;
  const turn = async (client: typeof alice, ws: number, text: string) => {
    const threadId = String((await client.createThread({ workspace: `ws-${ws}`, provider: "scripted", config: { approvalPolicy: "allow-all" }, binding: {} })).threadId);
    const endpointId = `vault-${++n}`;
    await client.registerEndpoint({ endpointId, kind: "memory", threadId, memory: handlers });
    const turnId = String((await client.submitTurn(threadId, { text })).turnId);
    assert.equal((await waitTurn(client, turnId, ["completed", "failed"], 30_000)).state, "completed");
    await client.disposeEndpoint(endpointId);
    return { threadId, prompt: prompts().find((p) => p.includes(text)) ?? "" };
  };

  const first = await turn(alice, 1, "PROMPT-1 remember my editor");
  assert.ok(!first.prompt.includes("VAULT-FACT"), "nothing is remembered yet");
  // What the application stores while the first thread runs (a /remember command, say).
  const stored = value(await vault.ingest({ partition: "p-alice", text: FACT, sources: [{ ref: `thread:${first.threadId}`, sha256: createHash("sha256").update("PROMPT-1").digest("hex") }] }));
  assert.equal(stored.ref, "p-alice:ep-0001");
  assert.match(readFileSync(join(root, "p-alice", "records", "ep-0001.md"), "utf8"), /^---\nschema: 1\n[\s\S]*\n---\nVAULT-FACT-7f3a/);

  const second = await turn(alice, 2, "PROMPT-2 which editor do I use?");
  assert.match(second.prompt, /<recalled-memory id="p-alice:ep-0001" origin="recall" [^>]*>\nVAULT-FACT-7f3a: the user's editor is Helix\.\n<\/recalled-memory>/);
  assert.ok(second.prompt.indexOf("VAULT-FACT") < second.prompt.indexOf("PROMPT-2"), "recalled ahead of the prompt");

  const other = await turn(bob, 3, "PROMPT-3 which editor do I use?");
  assert.ok(other.prompt.length > 0 && !other.prompt.includes("VAULT-FACT"), "another principal never receives it");

  assert.deepEqual(value(await vault.forget(stored.ref)), { ref: stored.ref, revision: 2, alreadyForgotten: false });
  const third = await turn(alice, 4, "PROMPT-4 which editor do I use?");
  assert.ok(third.prompt.length > 0 && !third.prompt.includes("VAULT-FACT"), "forgotten memory is not recalled");
  assert.deepEqual(await vault.ingest({ partition: "p-alice", text: FACT }), { ok: false, error: { code: "memory_excluded", retryable: false } });

  const rows = readDb<{ n: number }>(serve.databasePath, "SELECT count(*) AS n FROM journal WHERE instr(coalesce(payload, ''), ?) > 0 OR instr(metadata, ?) > 0", "VAULT-FACT", "VAULT-FACT")[0]?.n ?? 0;
  const files = [serve.databasePath, `${serve.databasePath}-wal`].filter((f) => existsSync(f));
  assert.equal(rows, 0);
  assert.ok(!files.some((f) => readFileSync(f).includes("VAULT-FACT")), "memory text reaches the agent, never the controller's database");
});
