// The render-time memory budget and the strict candidate reading (issue 30):
// one budget fixture per profile (vault skips, group truncates), the
// server-built envelope, and refusals of bad or marked candidates.
// P-MEM-02, P-MEM-03, P-MEM-12, P-MEM-17, P-API-09.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { MemoryCandidate } from "../../../src/domain/contract/memory.ts";
import { enforceMemoryBudget, estimateTokens, threadBudget, MEMORY_LIMIT_CAPS, MEMORY_LIMIT_DEFAULTS } from "../../../src/domain/memory-budget.ts";
import { parseEngineConfig } from "../../../src/domain/turn-config.ts";
import { memoryEnvelope, rankCandidates, readCandidate, readCandidates } from "../../../src/domain/memory-candidates.ts";

const SHA = "a".repeat(64);
const cand = (id: string, text: string, score: number, extra: Partial<MemoryCandidate> = {}): MemoryCandidate =>
  ({ id, text, score, updatedAt: "2026-01-02T03:04:05Z", sources: [{ ref: `notes/${id}.md`, sha256: SHA }], origin: "ingest", ...extra });

test("P-MEM-03 vault profile: a candidate over budget is skipped and the next one tried", () => {
  const small = cand("m-small", "short fact", 3);
  const big = cand("m-big", "x".repeat(4000), 5);
  const other = cand("m-other", "another fact", 1);
  const r = enforceMemoryBudget(rankCandidates([small, big, other]), { profile: "vault", budgetTokens: 120 });
  assert.deepEqual(r.rendered.map((m) => m.id), ["m-small", "m-other"]);
  assert.deepEqual(r.skipped, ["m-big"]);
  assert.ok(r.usedTokens <= 120);
  assert.equal(estimateTokens(r.text ?? ""), r.usedTokens);
  assert.ok(!(r.text ?? "").includes("xxxx"));
});

test("P-MEM-03 group profile: the first candidate over budget is truncated to the room left and nothing after it renders", () => {
  const first = cand("g-1", "first fact", 9);
  const long = cand("g-2", "y".repeat(4000), 5);
  const later = cand("g-3", "later", 1);
  const r = enforceMemoryBudget(rankCandidates([later, long, first]), { profile: "group", budgetTokens: 200 });
  assert.deepEqual(r.rendered.map((m) => [m.id, m.truncated]), [["g-1", false], ["g-2", true]]);
  assert.deepEqual(r.skipped, ["g-3"]);
  assert.ok(r.usedTokens <= 200 && r.usedTokens >= 190, `fills the budget: ${r.usedTokens}`);
  assert.ok((r.text ?? "").includes('truncated="true"'));
});

test("P-MEM-02 rendered entries carry their provenance id and origin in the recalled-memory tag; the budget is capped", () => {
  const r = enforceMemoryBudget([cand("p-1", "fact one", 1, { origin: "recall" })], { profile: "vault", budgetTokens: 1000 });
  assert.match(r.text ?? "", /^<recalled-memory id="p-1" origin="recall" updated="2026-01-02T03:04:05Z" sources="1">\nfact one\n<\/recalled-memory>\n$/);
  assert.deepEqual(threadBudget({ budgetTokens: 10_000_000 }, { memoryMaxTokens: 500, memoryMaxCandidates: 8 }), { profile: "vault", budgetTokens: 500 });
  assert.equal(threadBudget({ profile: "group" }, { memoryMaxTokens: 10_000_000, memoryMaxCandidates: 8 }).budgetTokens, MEMORY_LIMIT_CAPS.memoryMaxTokens);
  assert.deepEqual(enforceMemoryBudget([cand("p-2", "z".repeat(100), 1)], { profile: "group", budgetTokens: 5 }), { text: null, rendered: [], skipped: ["p-2"], usedTokens: 0 });
});

test("P-MEM-12 P-MEM-17 a candidate carrying a redaction or omission marker (or the recall tag) is refused candidate_rejected; bad shapes candidate_invalid", () => {
  assert.deepEqual(readCandidate(cand("r-1", "key is [redacted:aws_access_key]", 1)), { ok: false, code: "candidate_rejected" });
  assert.deepEqual(readCandidate(cand("r-2", "[omitted: payload_too_large]", 1)), { ok: false, code: "candidate_rejected" });
  assert.deepEqual(readCandidate(cand("r-3", "ok", 1, { sources: [{ ref: "[redacted:x]/a.md", sha256: SHA }] })), { ok: false, code: "candidate_rejected" });
  assert.deepEqual(readCandidate(cand("r-4", '<recalled-memory id="x">old</recalled-memory>', 1)), { ok: false, code: "candidate_rejected" });
  for (const bad of [
    { ...cand("b-1", "t", 1), extra: true },
    cand("b-2", "", 1),
    cand("b 3", "t", 1),
    cand("b-4", "t", Number.NaN),
    cand("b-5", "t", 1, { updatedAt: "yesterday" }),
    cand("b-6", "t", 1, { sources: [{ ref: "a", sha256: "ABC" }] }),
    cand("b-7", "t", 1, { origin: "guess" as never }),
  ]) assert.deepEqual(readCandidate(bad), { ok: false, code: "candidate_invalid" });
  const read = readCandidates({ candidates: [cand("c-1", "a", 1), cand("c-1", "b", 2), cand("c-2", "[redacted:k]", 1), { id: 3 }, cand("c-3", "c", 1)] }, 4);
  assert.deepEqual(read && { ids: read.candidates.map((c) => c.id), invalid: read.invalid, rejected: read.rejected, duplicates: read.duplicates }, { ids: ["c-1"], invalid: 1, rejected: 1, duplicates: 1 });
  assert.equal(readCandidates({ candidates: [], principal: "mallory" }, 4), null);
  assert.equal(readCandidates([], 4), null);
});

test("P-API-09 AIC-API-004c the envelope is built from the stored thread alone", () => {
  const thread = { threadId: "t-1", principal: "alice", application: "notes", workspaceId: "ws-1", restricted: true, binding: { principal: "mallory" } };
  assert.deepEqual(memoryEnvelope(thread), { principal: "alice", application: "notes", thread: "t-1", workspace: "ws-1", restricted: true });
});

test("P-MEM-02 the memory limits are configurable under limits.turns and capped; out of range is config_invalid", () => {
  const defaults = parseEngineConfig({});
  assert.ok(defaults.ok);
  assert.deepEqual(defaults.value.memory, MEMORY_LIMIT_DEFAULTS);
  const set = parseEngineConfig({ limits: { turns: { memoryMaxTokens: 500, memoryMaxCandidates: 4 } } });
  assert.ok(set.ok);
  assert.deepEqual(set.value.memory, { memoryMaxTokens: 500, memoryMaxCandidates: 4 });
  for (const [key, value] of [["memoryMaxTokens", MEMORY_LIMIT_CAPS.memoryMaxTokens + 1], ["memoryMaxCandidates", 65], ["memoryMaxTokens", 0], ["memoryMaxCandidates", 1.5]] as const) {
    const bad = parseEngineConfig({ limits: { turns: { [key]: value } } });
    assert.deepEqual(bad.ok ? null : bad.error, { code: "config_invalid", retryable: false, where: `limits.turns.${key}` });
  }
});
