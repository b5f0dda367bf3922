// The memory read tools (issue 30), black-box through `serve`: the scripted
// ACP agent plays an MCP client of the bridge grant it was given in
// session/new, lists the tools and calls memory_search / memory_read during
// a real turn. Evidence is authorized first; a transformed or redacted
// location fails closed; read arguments never reach the journal; restricted
// threads, other principals and disposed endpoints get no memory tools.
// P-ARC-20, P-ARC-21, P-MEM-02, P-MEM-15, P-MEM-16, P-API-09, AIC-API-004c,
// P-ARC-23.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { test } from "node:test";
import type { EvidenceLocation, MemoryCandidate, MemoryEnvelope } from "../../src/client.ts";
import type { AgentStep } from "../support/scripted-acp-agent.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { engineServe, waitTurn } from "../support/engine-serve.ts";
import { tempDir } from "../support/temp.ts";

const SHA = "c".repeat(64);
const SECRET_REF = `vault/ghp_${"Q7".repeat(18)}.md`;
const cand = (id: string, text: string, ref = `vault/${id}.md`): MemoryCandidate =>
  ({ id, text, score: 1, updatedAt: "2026-03-04T05:06:07Z", sources: [{ ref, sha256: SHA }], origin: "ingest" });
const calls = (list: { name: string; args: Record<string, unknown> }[]): AgentStep[] => [{ mcp: { calls: list } }, { say: "done" }];

test("memory read tools through serve", async (t) => {
  const dir = tempDir(t, "aic-memtools-");
  const agent = scriptedAgent({
    byPrompt: {
      SEARCH: calls([{ name: "memory_search", args: { query: "where is the key", limit: 5, principal: "mallory", application: "evil", thread: "other" } }]),
      // The agent also reports the call over ACP with its raw input, as a real agent does.
      READ: [
        { tool: { id: "mcp-read-1", title: "lapis-app-tools/memory_read", kind: "fetch", rawInput: { id: "READ-ARG-CANARY-ID" } } },
        ...calls([{ name: "memory_read", args: { id: "READ-ARG-CANARY-ID" } }]),
        { toolUpdate: { id: "mcp-read-1", status: "completed", rawOutput: { text: "READ-TEXT-CANARY" } } },
      ],
      LIST: calls([]),
    },
    steps: [{ say: "ok" }],
  }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 5, { contextDeadlineMs: 3_000 });
  await serve.start();
  const c = await serve.client();
  const bob = await serve.client("bob");
  const mail = await serve.client("mail");
  t.after(() => { c.close(); bob.close(); mail.close(); });
  const thread = async (client: typeof c, ws: number, binding: Record<string, unknown> = {}) =>
    String((await client.createThread({ workspace: `ws-${ws}`, provider: "scripted", config: { approvalPolicy: "allow-all" }, binding })).threadId);
  let mark = 0;
  /** Runs a turn and answers what the agent's MCP client saw during it. */
  const turn = async (client: typeof c, threadId: string, text: string) => {
    mark = agent.log().length;
    const turnId = String((await client.submitTurn(threadId, { text })).turnId);
    assert.equal((await waitTurn(client, turnId, ["completed", "failed"], 20_000)).state, "completed");
    const log = agent.log().slice(mark);
    return {
      tools: (log.find((e) => e.event === "mcp_list")?.tools ?? null) as string[] | null,
      none: log.some((e) => e.event === "mcp_none"),
      results: log.filter((e) => e.event === "mcp_call").map((e) => ({ isError: e.isError as boolean, text: String(e.text) })),
      prompt: String(log.find((e) => e.event === "prompt")?.text ?? ""),
    };
  };
  const dbHas = (needle: string) => [serve.databasePath, `${serve.databasePath}-wal`].filter((f) => existsSync(f)).some((f) => readFileSync(f).includes(needle));

  type Seen = { op: string; access: MemoryEnvelope; detail: string };
  const seen: Seen[] = [];
  let location: EvidenceLocation | null = { ref: "vault/EVIDENCE-PATH-CANARY.md", sha256: SHA };
  let readAnswer: (l: EvidenceLocation) => MemoryCandidate = (l) => cand("READ-ARG-CANARY-ID", "READ-TEXT-CANARY", l.ref);
  const memory = {
    recall: () => [],
    search: (r: { access: MemoryEnvelope; query: string; limit: number }) => {
      seen.push({ op: "search", access: r.access, detail: `${r.query}|${r.limit}|${Object.keys(r).sort().join(",")}` });
      return [cand("found-1", "SEARCH-HIT-TEXT")];
    },
    authorize: (r: { access: MemoryEnvelope; id: string }) => { seen.push({ op: "authorize", access: r.access, detail: r.id }); return location; },
    read: (r: { access: MemoryEnvelope; id: string; location: EvidenceLocation }) => { seen.push({ op: "read", access: r.access, detail: r.location.ref }); return readAnswer(r.location); },
  };
  const aliceThread = await thread(c, 1);
  await c.registerEndpoint({ endpointId: "mem-tools", kind: "memory", threadId: aliceThread, memory });
  const envelope = { principal: "alice", application: "notes", thread: aliceThread, workspace: "ws-1", restricted: false };

  await t.test("P-ARC-20 P-MEM-02 P-ARC-21 P-API-09 AIC-API-004c memory_search is listed and callable; identity fields the agent adds are dropped and the endpoint gets the server envelope", async () => {
    seen.length = 0;
    const r = await turn(c, aliceThread, "SEARCH now");
    assert.deepEqual(r.tools, ["memory_search", "memory_read"]);
    assert.equal(r.results.length, 1);
    assert.equal(r.results[0]?.isError, false);
    assert.match(r.results[0]?.text ?? "", /^<recalled-memory id="found-1" origin="ingest" [^>]*>\nSEARCH-HIT-TEXT\n<\/recalled-memory>\n$/);
    assert.deepEqual(seen, [{ op: "search", access: envelope, detail: "where is the key|5|access,limit,query,threadId" }]);
  });

  await t.test("P-MEM-02 P-MEM-15 memory_read authorizes the evidence first, then reads it; the read arguments and location never reach the journal", async () => {
    seen.length = 0;
    const r = await turn(c, aliceThread, "READ now");
    assert.equal(r.results[0]?.isError, false, r.results[0]?.text);
    assert.match(r.results[0]?.text ?? "", /READ-TEXT-CANARY/);
    assert.deepEqual(seen.map((s) => [s.op, s.detail]), [["authorize", "READ-ARG-CANARY-ID"], ["read", "vault/EVIDENCE-PATH-CANARY.md"]]);
    assert.ok(seen.every((s) => JSON.stringify(s.access) === JSON.stringify(envelope)));
    assert.equal(dbHas("lapis-app-tools/memory_read"), true, "the tool call itself is journaled (its envelope, not its input)");
    for (const needle of ["READ-ARG-CANARY-ID", "EVIDENCE-PATH-CANARY", "READ-TEXT-CANARY", "SEARCH-HIT-TEXT"]) {
      assert.equal(dbHas(needle), false, needle);
      assert.equal(serve.stderr().includes(needle), false, `${needle} in the service log`);
    }
  });

  await t.test("P-MEM-16 a redacted or transformed evidence location fails closed evidence_location_invalid and is never read; a refusal is evidence_unauthorized", async () => {
    const cases: [EvidenceLocation | null, string][] = [
      [{ ref: "vault/[redacted:github_token].md", sha256: SHA }, "evidence_location_invalid"],
      [{ ref: SECRET_REF, sha256: SHA }, "evidence_location_invalid"],
      [null, "evidence_unauthorized"],
    ];
    for (const [loc, code] of cases) {
      seen.length = 0;
      location = loc;
      const r = await turn(c, aliceThread, "READ again");
      assert.deepEqual(r.results, [{ isError: true, text: code }]);
      assert.deepEqual(seen.map((s) => s.op), ["authorize"], "nothing is read");
    }
    assert.equal(dbHas(SECRET_REF), false);
  });

  await t.test("P-MEM-16 a read that does not rest on the authorized location fails closed; a marked one is candidate_rejected", async () => {
    location = { ref: "vault/authorized.md", sha256: SHA };
    readAnswer = () => cand("READ-ARG-CANARY-ID", "OTHER-TEXT", "vault/elsewhere.md");
    assert.deepEqual((await turn(c, aliceThread, "READ third")).results, [{ isError: true, text: "evidence_location_invalid" }]);
    readAnswer = (l) => cand("READ-ARG-CANARY-ID", "[redacted:jwt] REDACTED-TEXT", l.ref);
    assert.deepEqual((await turn(c, aliceThread, "READ fourth")).results, [{ isError: true, text: "candidate_rejected" }]);
  });

  await t.test("P-ARC-21 a restricted thread gets rendered memory and no memory tools", async () => {
    const restricted = await thread(c, 2, { restricted: true });
    await c.registerEndpoint({ endpointId: "mem-restricted", kind: "memory", threadId: restricted, memory: { ...memory, recall: () => [cand("rc-1", "RESTRICTED-RENDERED")] } });
    const r = await turn(c, restricted, "LIST restricted");
    assert.ok(r.prompt.includes("RESTRICTED-RENDERED"));
    assert.ok(r.none || !(r.tools ?? []).includes("memory_search"), "no memory tool for a restricted thread");
    await c.disposeEndpoint("mem-restricted");
  });

  await t.test("P-API-09 AIC-API-004c another principal or application never sees, queries or receives alice's memory; a client-sent principal is refused at registration", async () => {
    // Alice's unscoped memory endpoint serves every thread of alice's notes application, never bob's nor alice's mail.
    await c.registerEndpoint({ endpointId: "mem-alice-all", kind: "memory", memory: { ...memory, recall: () => { seen.push({ op: "recall", access: envelope, detail: "" }); return [cand("alice-1", "ALICE-ONLY")]; } } });
    for (const [other, ws] of [[bob, 3], [mail, 4]] as const) {
      const otherThread = await thread(other, ws);
      seen.length = 0;
      // Offered no tools, the other owner's session gets no bridge server at all (P-DNO-04): nothing to list or call.
      const listed = await turn(other, otherThread, "LIST other");
      assert.equal(listed.none, true, "the other owner's agent is given no tool bridge");
      assert.equal(listed.tools, null, "the other owner's agent lists no memory tool");
      const searched = await turn(other, otherThread, "SEARCH other");
      assert.equal(searched.none, true);
      assert.deepEqual(searched.results, [], "the other owner's agent cannot call memory_search");
      assert.ok(!listed.prompt.includes("ALICE-ONLY") && !searched.prompt.includes("ALICE-ONLY"));
      assert.deepEqual(seen, [], "alice's handlers are never called for another owner");
      // Nobody else can hang a memory endpoint on alice's thread, nor claim another identity.
      await assert.rejects(other.registerEndpoint({ endpointId: "mem-on-alice", kind: "memory", threadId: aliceThread, memory }), /not_found/);
      await assert.rejects(other.call("endpoints.register", { endpointId: "mem-claim", kind: "memory", principal: "alice", application: "notes" }), /invalid_params/);
    }
    await c.disposeEndpoint("mem-alice-all");
  });

  await t.test("P-ARC-23 P-DNO-04 disposing the memory endpoint removes the tools at once: the next turn's agent is given no tool bridge", async () => {
    assert.deepEqual((await turn(c, aliceThread, "LIST before")).tools, ["memory_search", "memory_read"]);
    await c.disposeEndpoint("mem-tools");
    const after = await turn(c, aliceThread, "SEARCH after");
    // The offered set changed, so the session was replaced; offered nothing, it has no bridge server (P-DNO-04).
    assert.equal(after.none, true, "no tool bridge once nothing is offered");
    assert.equal(after.tools, null);
    assert.deepEqual(after.results, [], "memory_search can no longer be called");
  });
});
