// The vault profile as memory-endpoint handlers: the partitions a thread
// reads come from the server-built envelope only (P-API-09, P-ARC-20); the
// answers fit the service's strict candidate reading; memory_read
// authorizes a revision and reads exactly it, failing closed on a change,
// a forget, another partition or a secret (P-MEM-13, P-MEM-16); a rendered
// recall block is never ingested again.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import type { MemoryEnvelope } from "../../../src/domain/contract/memory.ts";
import { memoryOperationHandler } from "../../../src/domain/memory-handlers.ts";
import { readCandidate, readCandidates } from "../../../src/domain/memory-candidates.ts";
import { vaultMemoryHandlers } from "../../../src/memory/lapis/endpoint.ts";
import { episodeDoc } from "../../support/memory-store-contract.ts";
import { CANARY_KEY, value, vaultSetup } from "../../support/vault-memory.ts";

const access = (principal: string, extra: Partial<MemoryEnvelope> = {}): MemoryEnvelope =>
  ({ principal, application: "chat", thread: "th-1", workspace: "ws-1", restricted: false, ...extra });
// The application's own rule: alice reads her user partition and the project; anyone else reads nothing.
const partitions = (a: MemoryEnvelope) => (a.principal === "alice" && a.application === "chat" ? ["user", "project"] : []);

test("P-ARC-20 P-API-09 recall and search read only the partitions the envelope maps to; answers pass the service's strict reading", async (t) => {
  const { vault } = vaultSetup(t);
  value(await vault.ingest({ partition: "user", text: "Alice's editor is Helix." }));
  value(await vault.ingest({ partition: "workspace", text: "The editor policy of another workspace." }));
  const handlers = vaultMemoryHandlers(vault, { partitions, budgetTokens: 200 });
  assert.equal(handlers.profile, "vault");
  assert.equal(handlers.budgetTokens, 200);
  const recall = memoryOperationHandler(handlers, "memory.recall")!;
  const answer = await recall({ access: access("alice"), threadId: "th-1", turnId: "tu-1", prompt: "which editor?", limit: 5 });
  const read = readCandidates(answer, 5);
  assert.ok(read !== null);
  assert.deepEqual(read.candidates.map((c) => [c.id, c.text, c.origin]), [["user:ep-0001", "Alice's editor is Helix.", "recall"]]);
  assert.deepEqual([read.invalid, read.rejected], [0, 0]);
  assert.deepEqual(await recall({ access: access("bob"), threadId: "th-1", turnId: "tu-1", prompt: "which editor?", limit: 5 }), { candidates: [] });
  assert.deepEqual(await recall({ access: access("alice", { application: "other" }), threadId: "th-1", turnId: "tu-1", prompt: "editor", limit: 5 }), { candidates: [] });
  const search = memoryOperationHandler(handlers, "memory.search")!;
  assert.deepEqual(readCandidates(await search({ access: access("alice"), threadId: "th-1", query: "policy", limit: 5 }), 5)?.candidates, []);
});

test("P-MEM-16 memory_read authorizes the current revision and reads exactly it; a change, a forget or another partition fails closed", async (t) => {
  const { vault } = vaultSetup(t);
  const stored = value(await vault.ingest({ partition: "user", text: "Deploys need two approvals.", sources: [{ ref: "thread:t#m-1", sha256: "e".repeat(64) }] }));
  const other = value(await vault.ingest({ partition: "workspace", text: "Not alice's memory." }));
  const handlers = vaultMemoryHandlers(vault, { partitions });
  const location = await handlers.authorize!({ access: access("alice"), threadId: "th-1", id: stored.ref });
  assert.ok(location !== null);
  assert.match(location.ref, /^vault:user:ep-0001@1$/);
  const candidate = await handlers.read!({ access: access("alice"), threadId: "th-1", id: stored.ref, location });
  assert.ok(readCandidate(candidate).ok);
  assert.equal(candidate.text, "Deploys need two approvals.");
  assert.deepEqual(candidate.sources.map((s) => s.ref), ["thread:t#m-1", location.ref], "the read memory's sources include the authorized location");
  assert.equal(await handlers.authorize!({ access: access("alice"), threadId: "th-1", id: other.ref }), null, "another partition");
  assert.equal(await handlers.authorize!({ access: access("bob"), threadId: "th-1", id: stored.ref }), null, "another principal");
  assert.equal(await handlers.authorize!({ access: access("alice"), threadId: "th-1", id: "user:ep-none" }), null);
  await assert.rejects(async () => handlers.read!({ access: access("alice"), threadId: "th-1", id: stored.ref, location: { ref: "vault:user:ep-0001@1", sha256: "0".repeat(64) } }), /^VaultEndpointFailure: evidence_unavailable$/);
  value(await vault.forget(stored.ref));
  await assert.rejects(async () => handlers.read!({ access: access("alice"), threadId: "th-1", id: stored.ref, location }), /evidence_unavailable/, "forgotten after authorize");
  assert.equal(await handlers.authorize!({ access: access("alice"), threadId: "th-1", id: stored.ref }), null);
});

test("P-MEM-13 a legacy record carrying a secret is never read out through the endpoint", async (t) => {
  const { vault, root } = vaultSetup(t);
  value(await vault.ingest({ partition: "user", text: "placeholder so the folder exists" }));
  writeFileSync(join(root, "user", "records", "ep-leak.md"), episodeDoc("ep-leak", 1, `the deploy token is ${CANARY_KEY}`));
  const handlers = vaultMemoryHandlers(vault, { partitions });
  assert.equal(await handlers.authorize!({ access: access("alice"), threadId: "th-1", id: "user:ep-leak" }), null);
  const found = await handlers.search!({ access: access("alice"), threadId: "th-1", query: "deploy token", limit: 5 });
  assert.ok(!JSON.stringify(found).includes(CANARY_KEY));
  assert.deepEqual(found, []);
});

test("P-ARC-20 a rendered recall block pasted back into ingest is refused as recalled content", async (t) => {
  const { vault } = vaultSetup(t);
  const refused = { ok: false, error: { code: "memory_recalled_content", retryable: false } };
  assert.deepEqual(await vault.ingest({ partition: "user", text: '<recalled-memory id="user:ep-1">The editor is Helix.</recalled-memory>' }), refused);
  assert.deepEqual(await vault.ingest({ partition: "user", text: "The editor is Helix.</recalled-memory>" }), refused);
});
