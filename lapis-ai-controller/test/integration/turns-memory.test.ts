// Memory recall at preparation (issue 30), black-box through the SDK against
// `serve` with the scripted ACP agent: a thread's memory endpoint is asked
// with the server-built envelope once the turn holds its lease; candidates
// are budgeted (vault skips, group truncates), refused when marked, rendered
// ahead of the prompt in tagged entries, and only their ids are recorded in
// the owner journal. P-ARC-20, P-ARC-21, P-ARC-22, P-MEM-02, P-MEM-03,
// P-MEM-12, P-MEM-17, P-API-09, AIC-API-004c, P-ARC-23.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { test } from "node:test";
import type { MemoryCandidate, MemoryEnvelope } from "../../src/client.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { engineServe, readDb, waitTurn } from "../support/engine-serve.ts";
import { tempDir } from "../support/temp.ts";

const SHA = "b".repeat(64);
const cand = (id: string, text: string, score: number, extra: Partial<MemoryCandidate> = {}): MemoryCandidate =>
  ({ id, text, score, updatedAt: "2026-03-04T05:06:07Z", sources: [{ ref: `vault/${id}.md`, sha256: SHA }], origin: "ingest", ...extra });

type Row = { kind: string; metadata: string; payload: string | null };

test("memory recall through serve", async (t) => {
  const dir = tempDir(t, "aic-memory-");
  const agent = scriptedAgent({ byPrompt: { STALL: [{ say: "s" }, { stall: true }] }, steps: [{ say: "ok", messageId: "m1" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 4, { contextDeadlineMs: 3_000, memoryMaxTokens: 400 });
  await serve.start();
  const c = await serve.client();
  t.after(() => c.close());
  const prompts = () => agent.log().filter((e) => e.event === "prompt").map((e) => String(e.text));
  const thread = async (ws: number, binding: Record<string, unknown> = {}) =>
    String((await c.createThread({ workspace: `ws-${ws}`, provider: "scripted", config: { approvalPolicy: "allow-all" }, binding })).threadId);
  const run = async (threadId: string, text: string) => {
    const turnId = String((await c.submitTurn(threadId, { text })).turnId);
    const view = await waitTurn(c, turnId, ["completed", "failed"], 20_000);
    assert.equal(view.state, "completed");
    return { turnId, prompt: prompts().find((p) => p.includes(text)) ?? "" };
  };
  const owner = (turnId: string) => readDb<Row>(serve.databasePath, "SELECT kind, metadata, payload FROM journal WHERE turn_id = ? AND visibility = 'owner' ORDER BY journal_id", turnId);
  const recalled = (turnId: string) => JSON.parse(owner(turnId).find((r) => r.kind === "memory_recalled")?.metadata ?? "null") as Record<string, unknown> | null;
  const renderedIds = (turnId: string) => owner(turnId).filter((r) => r.kind === "memory_rendered").map((r) => JSON.parse(r.metadata) as { memoryId: string; rank: number; truncated: boolean });
  const dbHas = (needle: string) => {
    const rows = readDb<{ n: number }>(serve.databasePath, "SELECT count(*) AS n FROM journal WHERE instr(coalesce(payload, ''), ?) > 0 OR instr(metadata, ?) > 0", needle, needle)[0]?.n ?? 0;
    const files = [serve.databasePath, `${serve.databasePath}-wal`].filter((f) => existsSync(f));
    return rows > 0 || files.some((f) => readFileSync(f).includes(needle));
  };

  await t.test("P-ARC-20 P-ARC-21 P-MEM-02 P-API-09 AIC-API-004c candidates reach the agent ahead of the prompt, tagged with their ids; the endpoint gets only the server-built envelope; the ids, never the text, are recorded", async () => {
    const threadId = await thread(1);
    const seen: { access: MemoryEnvelope; prompt: string; limit: number; keys: string[] }[] = [];
    await c.registerEndpoint({
      endpointId: "mem-a", kind: "memory", threadId,
      memory: {
        budgetTokens: 300,
        recall: (r) => {
          seen.push({ access: r.access, prompt: r.prompt, limit: r.limit, keys: Object.keys(r.access).sort() });
          return [cand("fact-low", "RECALL-CANARY-LOW", 1), cand("fact-high", "RECALL-CANARY-HIGH", 7, { origin: "recall" })];
        },
      },
    });
    const { turnId, prompt } = await run(threadId, "USER-PROMPT-1");
    assert.deepEqual(seen.map((s) => s.access), [{ principal: "alice", application: "notes", thread: threadId, workspace: "ws-1", restricted: false }]);
    assert.deepEqual(seen[0]?.keys, ["application", "principal", "restricted", "thread", "workspace"]);
    assert.equal(seen[0]?.prompt, "USER-PROMPT-1");
    assert.ok(prompt.indexOf("RECALL-CANARY-HIGH") < prompt.indexOf("RECALL-CANARY-LOW") && prompt.indexOf("RECALL-CANARY-LOW") < prompt.indexOf("USER-PROMPT-1"), "ranked, ahead of the prompt");
    assert.match(prompt, /<recalled-memory id="fact-high" origin="recall" [^>]*>\nRECALL-CANARY-HIGH\n<\/recalled-memory>/);
    assert.match(prompt, /<recalled-memory id="fact-low" origin="ingest" /);
    assert.deepEqual(renderedIds(turnId).map((r) => [r.memoryId, r.rank]), [["fact-high", 0], ["fact-low", 1]]);
    assert.deepEqual(recalled(turnId), { endpointId: "mem-a", code: null, profile: "vault", budgetTokens: 300, usedTokens: recalled(turnId)?.usedTokens, offered: 2, invalid: 0, rejected: 0, skipped: 0, rendered: 2 });
    assert.equal(dbHas("RECALL-CANARY"), false, "memory text is given to the agent, never stored");
    await c.disposeEndpoint("mem-a");
  });

  await t.test("P-MEM-03 P-ARC-22 the vault profile skips a candidate over the thread's budget and renders the next; the budget is capped by limits.turns.memoryMaxTokens", async () => {
    const threadId = await thread(2);
    await c.registerEndpoint({
      endpointId: "mem-vault", kind: "memory", threadId,
      memory: { profile: "vault", budgetTokens: 100_000, recall: () => [cand("v-big", `VAULT-BIG ${"x".repeat(4_000)}`, 9), cand("v-small", "VAULT-SMALL", 2)] },
    });
    const { turnId, prompt } = await run(threadId, "USER-PROMPT-2");
    assert.ok(!prompt.includes("VAULT-BIG") && prompt.includes("VAULT-SMALL"));
    assert.deepEqual(renderedIds(turnId).map((r) => r.memoryId), ["v-small"]);
    assert.equal(recalled(turnId)?.budgetTokens, 400, "the service cap, not the 100000 the application asked for");
    assert.equal(recalled(turnId)?.skipped, 1);
    await c.disposeEndpoint("mem-vault");
  });

  await t.test("P-MEM-03 P-ARC-22 the group profile truncates the first candidate over budget and stops", async () => {
    const threadId = await thread(2);
    await c.registerEndpoint({
      endpointId: "mem-group", kind: "memory", threadId,
      memory: { profile: "group", budgetTokens: 120, recall: () => [cand("g-big", `GROUP-BIG ${"y".repeat(4_000)}`, 9), cand("g-small", "GROUP-SMALL", 2)] },
    });
    const { turnId, prompt } = await run(threadId, "USER-PROMPT-3");
    assert.ok(prompt.includes("GROUP-BIG") && !prompt.includes("GROUP-SMALL"));
    assert.match(prompt, /<recalled-memory id="g-big" [^>]*truncated="true">/);
    assert.ok(!prompt.includes("y".repeat(480)), "cut to the budget");
    assert.deepEqual(renderedIds(turnId).map((r) => [r.memoryId, r.truncated]), [["g-big", true]]);
    const usedTokens = Number(recalled(turnId)?.usedTokens);
    assert.ok(usedTokens <= 120 && usedTokens > 100, `filled to the budget: ${usedTokens}`);
    await c.disposeEndpoint("mem-group");
  });

  await t.test("P-MEM-12 P-MEM-17 a candidate carrying a redaction or omission marker is refused candidate_rejected and never rendered; malformed ones are refused too", async () => {
    const threadId = await thread(3);
    await c.registerEndpoint({
      endpointId: "mem-marked", kind: "memory", threadId,
      memory: {
        recall: () => [
          cand("mk-1", "token [redacted:github_pat] MARKED-ONE", 5), cand("mk-2", "[omitted: payload_too_large] MARKED-TWO", 4),
          { ...cand("mk-3", "MALFORMED-THREE", 3), principal: "bob" } as MemoryCandidate, cand("mk-4", "CLEAN-FOUR", 1),
        ],
      },
    });
    const { turnId, prompt } = await run(threadId, "USER-PROMPT-4");
    assert.ok(!prompt.includes("MARKED-") && !prompt.includes("MALFORMED-") && prompt.includes("CLEAN-FOUR"));
    assert.deepEqual(renderedIds(turnId).map((r) => r.memoryId), ["mk-4"]);
    assert.deepEqual([recalled(turnId)?.rejected, recalled(turnId)?.invalid, recalled(turnId)?.offered], [2, 1, 4]);
    await c.disposeEndpoint("mem-marked");
  });

  await t.test("P-MEM-02 P-API-09 turns.get shows the owner which memory ids reached the agent (vault ids with a slash, counts, never text); another principal or application reads not_found", async () => {
    const threadId = await thread(2);
    await c.registerEndpoint({ endpointId: "mem-view", kind: "memory", threadId, memory: { budgetTokens: 200, recall: () => [cand("user/ep-0001", "VIEW-CANARY-A", 5), cand("user/ep-0002", `VIEW-CANARY-BIG ${"y".repeat(2_000)}`, 4), cand("bad id", "VIEW-CANARY-C", 3)] } });
    const { turnId, prompt } = await run(threadId, "USER-PROMPT-VIEW");
    assert.match(prompt, /<recalled-memory id="user\/ep-0001" /);
    const view = await c.turns.get(turnId);
    assert.deepEqual(view.memory, { endpointId: "mem-view", code: null, profile: "vault", budgetTokens: 200, usedTokens: view.memory?.usedTokens, offered: 3, invalid: 1, rejected: 0, skipped: 1, rendered: [{ memoryId: "user/ep-0001", origin: "ingest", truncated: false }] });
    assert.ok(!JSON.stringify(view).includes("VIEW-CANARY"), "ids and counts only");
    await c.disposeEndpoint("mem-view");
    const plain = await run(threadId, "USER-PROMPT-NOMEM");
    assert.equal((await c.turns.get(plain.turnId)).memory, null, "no memory endpoint at preparation: null");
    for (const who of ["bob", "mail"]) {
      const stranger = await serve.client(who);
      await assert.rejects(stranger.turns.get(turnId), (e: { code?: string }) => e.code === "not_found");
      stranger.close();
    }
  });

  await t.test("P-ARC-21 a restricted, metadata-only thread gets rendered memory and its ids survive as metadata", async () => {
    const threadId = await thread(4, { restricted: true, retention: "metadata-only" });
    await c.registerEndpoint({ endpointId: "mem-r", kind: "memory", threadId, memory: { recall: (r) => [cand("r-1", `RESTRICTED-${String(r.access.restricted)}`, 1)] } });
    const { turnId, prompt } = await run(threadId, "USER-PROMPT-5");
    assert.ok(prompt.includes("RESTRICTED-true"), "the envelope says restricted");
    assert.deepEqual(renderedIds(turnId).map((r) => r.memoryId), ["r-1"]);
    assert.equal(dbHas("RESTRICTED-true"), false);
    await c.disposeEndpoint("mem-r");
  });

  await t.test("P-ARC-23 a memory endpoint is revoked at once on dispose or disconnect: the next turn recalls nothing and runs", async () => {
    const other = await serve.client();
    const threadId = await thread(1);
    let calls = 0;
    await other.registerEndpoint({ endpointId: "mem-gone", kind: "memory", threadId, memory: { recall: () => { calls += 1; return [cand("gone-1", "GONE-TEXT", 1)]; } } });
    other.close();
    const first = await run(threadId, "USER-PROMPT-6");
    await c.registerEndpoint({ endpointId: "mem-disposed", kind: "memory", threadId, memory: { recall: () => { calls += 1; return [cand("gone-2", "GONE-TEXT", 1)]; } } });
    await c.disposeEndpoint("mem-disposed");
    const second = await run(threadId, "USER-PROMPT-7");
    assert.equal(calls, 0);
    assert.ok(!first.prompt.includes("GONE-TEXT") && !second.prompt.includes("GONE-TEXT"));
    // The close may still be on its way to the service: then the call in flight settles endpoint_disconnected, unanswered.
    const gone = recalled(first.turnId);
    assert.ok(gone === null || (gone.code === "endpoint_disconnected" && gone.rendered === 0), JSON.stringify(gone));
    assert.equal(recalled(second.turnId), null, "a disposed endpoint is not even asked");
  });

  await t.test("P-MEM-02 P-ARC-21 recall waits for the lease: a queued turn's memory endpoint is not asked until its workspace is free", async () => {
    const first = await thread(4);
    const second = await thread(4);
    const asked: string[] = [];
    await c.registerEndpoint({ endpointId: "mem-q", kind: "memory", threadId: second, memory: { recall: (r) => { asked.push(r.turnId); return [cand("q-1", "QUEUED-MEMORY", 1)]; } } });
    const t1 = String((await c.submitTurn(first, { text: "STALL" })).turnId);
    const end = Date.now() + 15_000;
    while (!prompts().some((p) => p.includes("STALL"))) {
      if (Date.now() > end) throw new Error("turn 1 not dispatched");
      await new Promise((r) => setTimeout(r, 25));
    }
    const t2 = String((await c.submitTurn(second, { text: "USER-PROMPT-9" })).turnId);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await c.call("turns.get", { turnId: t2 }) as { state: string }).state, "queued");
    assert.deepEqual(asked, [], "not asked while queued");
    await c.cancelTurn(t1);
    await waitTurn(c, t2, ["completed"], 20_000);
    assert.deepEqual(asked, [t2]);
    assert.ok(prompts().some((p) => p.includes("QUEUED-MEMORY") && p.includes("USER-PROMPT-9")));
    await c.disposeEndpoint("mem-q");
  });

  await t.test("P-ARC-21 a memory endpoint that stalls past the context deadline gives no memory, a recorded code, and the turn still runs", async () => {
    const threadId = await thread(3);
    await c.registerEndpoint({ endpointId: "mem-slow", kind: "memory", threadId, memory: { recall: () => new Promise(() => {}) } });
    const { turnId, prompt } = await run(threadId, "USER-PROMPT-8");
    assert.ok(!prompt.includes("recalled-memory"));
    assert.equal(recalled(turnId)?.code, "endpoint_timeout");
    await c.disposeEndpoint("mem-slow");
  });
});
