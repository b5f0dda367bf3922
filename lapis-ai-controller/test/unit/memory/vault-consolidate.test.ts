// Consolidation on the vault profile: deterministic promotion rules (the
// same inputs always give the same plan), marked candidates rejected rather
// than promoted (P-MEM-12), and the maintenance lease: two stores over one
// directory, or two processes, never consolidate at once (P-MEM-04).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { planConsolidation } from "../../../src/memory/lapis/consolidate.ts";
import type { Episode } from "../../../src/memory/lapis/episode.ts";
import { MarkdownFilesStore } from "../../../src/memory/lapis/files-store.ts";
import { evalModuleCommand } from "../../support/eval-module.ts";
import { episodeDoc } from "../../support/memory-store-contract.ts";
import { PACKAGE_ROOT } from "../../support/processes.ts";
import { value, vaultSetup } from "../../support/vault-memory.ts";

const H = (c: string) => c.repeat(64);
const ep = (id: string, text: string, created: string, sources: [string, string][] = [], extra: Partial<Episode> = {}): Episode => ({
  schema: 1, id, created, updated: created, revision: 1, tier: "episode", state: "active", supersededBy: null, tags: ["origin:ingest"],
  sources: sources.map(([ref, c]) => ({ ref, sha256: H(c) })), body: `${text}\n`, newline: "\n", ...extra,
});
const RULES = { promoteSources: 2, maxSources: 32 };
const AT = "2026-05-01T00:00:00.000Z";

test("P-MEM-04 promotion rules: duplicates merge into the earliest, multi-source episodes promote, the plan ignores input order", () => {
  const episodes = [
    ep("ep-c", "Builds run on the ci box.", "2026-01-03T00:00:00.000Z", [["t:3", "c"]], { tags: ["origin:ingest", "topic:ci"] }),
    ep("ep-a", "builds  run on the CI box.", "2026-01-01T00:00:00.000Z", [["t:1", "a"]]),
    ep("ep-b", "Builds run on the ci box.", "2026-01-01T00:00:00.000Z", [["t:2", "b"]]),
    ep("ep-m", "Two threads said so.", "2026-01-02T00:00:00.000Z", [["t:1", "a"], ["t:2", "b"]]),
    ep("ep-s", "One thread said so.", "2026-01-02T00:00:00.000Z", [["t:1", "a"]]),
    ep("ep-r", "Recalled text.", "2026-01-02T00:00:00.000Z", [], { tags: ["origin:recall"] }),
    ep("ep-x", "The key is [redacted:openai_api_key].", "2026-01-02T00:00:00.000Z", [["t:1", "a"], ["t:2", "b"]]),
    ep("ep-f", "Builds run on the ci box.", "2025-01-01T00:00:00.000Z", [], { state: "forgotten" }),
  ];
  const plan = planConsolidation(episodes, AT, RULES);
  assert.deepEqual(plan.writes.map((w) => [w.kind, w.after.id, w.after.tier, w.after.state, w.after.supersededBy]), [
    ["promote", "ep-a", "promoted", "active", null],
    ["supersede", "ep-b", "episode", "superseded", "ep-a"],
    ["supersede", "ep-c", "episode", "superseded", "ep-a"],
    ["promote", "ep-m", "promoted", "active", null],
  ]);
  const survivor = plan.writes[0]!.after;
  assert.deepEqual(survivor.sources.map((s) => s.ref), ["t:1", "t:2", "t:3"]);
  assert.deepEqual(survivor.tags, ["origin:ingest", "topic:ci"]);
  assert.equal(survivor.revision, 2);
  assert.equal(survivor.updated, AT);
  assert.deepEqual(plan.rejected, ["ep-x"], "a marked candidate is rejected, never promoted");
  for (let i = 0; i < 5; i += 1) {
    const shuffled = [...episodes].sort(() => (i % 2 === 0 ? 1 : -1)).reverse();
    assert.deepEqual(planConsolidation(shuffled, AT, RULES), plan);
  }
  const applied = episodes.map((e) => plan.writes.find((w) => w.before.id === e.id)?.after ?? e);
  assert.deepEqual(planConsolidation(applied, "2026-06-01T00:00:00.000Z", RULES).writes, [], "a second run plans nothing");
});

test("P-MEM-04 P-MEM-12 consolidate applies the plan through the store, screening legacy records first", async (t) => {
  const { vault, root } = vaultSetup(t, { fromFixture: true });
  writeFileSync(join(root, "user", "records", "ep-dup.md"), episodeDoc("ep-dup", 1, "The user prefers tabs over spaces in Go files.",
    { created: "2026-03-02T00:00:00.000Z", updated: "2026-03-02T00:00:00.000Z" }));
  writeFileSync(join(root, "user", "records", "ep-leak.md"), episodeDoc("ep-leak", 1, "token sk-proj-CANARYabcdefghijklmnopqrstuvwxyz0123 here",
    { sources: [{ ref: "t:1", sha256: H("a") }, { ref: "t:2", sha256: H("b") }] }));
  const out = value(await vault.consolidate("user", "test"));
  assert.deepEqual(out, { promoted: ["user:ep-basic"], superseded: ["user:ep-dup"], rejected: ["user:ep-leak"], invalid: [] });
  const basic = value(await vault.inspect("user:ep-basic"));
  assert.equal(basic.current.tier, "promoted");
  assert.deepEqual(basic.current.sources.map((s) => s.ref), ["thread:t#m", "thread:t-1#m-1"]);
  assert.equal(value(await vault.inspect("user:ep-dup")).current.supersededBy, "ep-basic");
  assert.deepEqual(value(await vault.consolidate("user", "test")), { promoted: [], superseded: [], rejected: ["user:ep-leak"], invalid: [] });
});

test("P-MEM-04 two stores over one directory never consolidate at once: the second is refused while the lease is held", async (t) => {
  const a = vaultSetup(t);
  const b = vaultSetup(t, { root: a.root });
  value(await a.vault.ingest({ partition: "user", text: "Same words." }));
  writeFileSync(join(a.root, "user", "records", "ep-9999.md"), episodeDoc("ep-9999", 1, "same words."));
  const lease = value(await a.store.acquireLease("consolidate.user", "a", 60_000));
  assert.deepEqual(await b.vault.consolidate("user", "b"), { ok: false, error: { code: "memory_lease_held", retryable: true } });
  await lease.release();
  const [first, second] = await Promise.all([a.vault.consolidate("user", "a"), b.vault.consolidate("user", "b")]);
  assert.ok(first.ok);
  assert.deepEqual(second, { ok: false, error: { code: "memory_lease_held", retryable: true } });
  assert.equal(first.value.superseded.length, 1);
  assert.ok(value(await b.vault.consolidate("user", "b")), "after release the other store may run");
});

test("P-MEM-04 a lease held by another process refuses consolidation until that process releases it", { timeout: 60_000 }, async (t) => {
  const { vault, root } = vaultSetup(t);
  const storeUrl = new URL("../../../src/memory/lapis/files-store.ts", import.meta.url).href;
  const script = `import { MarkdownFilesStore } from ${JSON.stringify(storeUrl)};
const lease = await new MarkdownFilesStore(${JSON.stringify(root)}).acquireLease("consolidate.user", "child", 60000);
process.stdout.write(lease.ok ? "held\\n" : "failed\\n");
process.stdin.on("end", async () => { if (lease.ok) await lease.value.release(); process.exit(0); });
process.stdin.resume();`;
  const run = evalModuleCommand(script);
  const child = spawn(run.command, run.args, { cwd: PACKAGE_ROOT, env: run.env, stdio: ["pipe", "pipe", "inherit"] });
  t.after(() => child.kill());
  const [line] = await once(child.stdout, "data") as [Buffer];
  assert.equal(line.toString(), "held\n");
  assert.deepEqual(await vault.consolidate("user", "parent"), { ok: false, error: { code: "memory_lease_held", retryable: true } });
  child.stdin.end();
  await once(child, "exit");
  assert.ok((await vault.consolidate("user", "parent")).ok);
  assert.ok((await new MarkdownFilesStore(root).acquireLease("consolidate.user", "after", 1_000)).ok, "the parent released its lease too");
});
