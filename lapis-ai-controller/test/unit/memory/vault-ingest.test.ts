// Vault ingest and search: recalled content is never stored again, a secret
// is refused before any write (P-MEM-13), duplicates do not grow the store,
// partitions are filtered before scoring (P-ARC-20), and legacy records on
// disk are screened before they become candidates (P-MEM-13, P-MEM-17).
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { readCandidates, RECALLED_MEMORY_TAG } from "../../../src/domain/memory-candidates.ts";
import { episodeDoc } from "../../support/memory-store-contract.ts";
import { CANARY_KEY, value, vaultSetup } from "../../support/vault-memory.ts";

const HASH = "d".repeat(64);
const refused = (code: string) => ({ ok: false, error: { code, retryable: false } });

test("P-ARC-20 P-MEM-01 ingest writes a schema-1 episode with origin:ingest, sorted sources and tags", async (t) => {
  const { vault, root } = vaultSetup(t);
  const out = value(await vault.ingest({ partition: "user", text: "The user prefers tabs over spaces.\n\n", tags: ["topic:style"],
    sources: [{ ref: "thread:b#m-2", sha256: HASH }, { ref: "thread:a#m-1", sha256: HASH }, { ref: "thread:a#m-1", sha256: HASH }] }));
  assert.deepEqual(out, { ref: "user:ep-0001", revision: 1, duplicate: false });
  assert.equal(readFileSync(join(root, "user", "records", "ep-0001.md"), "utf8"), [
    "---", "schema: 1", "id: ep-0001", "created: 2026-04-01T00:00:01.000Z", "updated: 2026-04-01T00:00:01.000Z", "revision: 1", "tier: episode", "state: active",
    "tags:", "  - origin:ingest", "  - topic:style", "sources:", "  - ref: thread:a#m-1", `    sha256: ${HASH}`, "  - ref: thread:b#m-2", `    sha256: ${HASH}`, "---",
    "The user prefers tabs over spaces.", ""].join("\n"));
});

test("P-MEM-13 a secret in the text, a source ref or a tag is refused before anything is written; a failed scanner fails closed", async (t) => {
  const { vault, root, scanner } = vaultSetup(t);
  assert.deepEqual(await vault.ingest({ partition: "user", text: `my key is ${CANARY_KEY}` }), refused("candidate_rejected"));
  assert.deepEqual(await vault.ingest({ partition: "user", text: "clean", sources: [{ ref: `file:${CANARY_KEY}`, sha256: HASH }] }), refused("candidate_rejected"));
  assert.deepEqual(await vault.ingest({ partition: "user", text: "the key is [redacted:openai_api_key]" }), refused("candidate_rejected"));
  assert.deepEqual(await vault.ingest({ partition: "user", text: "clean", sources: [{ ref: "file:[redacted:x]", sha256: HASH }] }), refused("evidence_location_invalid"));
  await scanner.close();
  assert.deepEqual(await vault.ingest({ partition: "user", text: "a memory long enough to be scanned" }), refused("scanner_unavailable"));
  assert.equal(existsSync(join(root, "user")), false, "nothing reached the disk");
});

test("P-ARC-20 recalled candidates passed back to ingest are refused; the store does not grow (no recall feedback loop)", async (t) => {
  const { vault, store } = vaultSetup(t);
  value(await vault.ingest({ partition: "user", text: "The release train leaves on Tuesdays." }));
  for (let round = 0; round < 5; round += 1) {
    const found = value(await vault.search({ partitions: ["user"], query: "release train" }));
    assert.equal(found.candidates.length, 1);
    for (const c of found.candidates) {
      assert.equal(c.origin, "recall");
      assert.deepEqual(await vault.ingest({ partition: "user", text: c.text, sources: c.sources, origin: c.origin }), refused("memory_recalled_content"));
    }
    assert.deepEqual(await vault.ingest({ partition: "user", text: "something recalled", tags: ["origin:recall"] }), refused("memory_recalled_content"));
    // The same text ingested again answers the existing record.
    assert.deepEqual(await vault.ingest({ partition: "user", text: "  the RELEASE train leaves on tuesdays. " }), { ok: true, value: { ref: "user:ep-0001", revision: 1, duplicate: true } });
  }
  assert.equal(value(await store.list("user")).length, 1);
});

test("P-ARC-20 ingest validates names, tags and limits", async (t) => {
  const { vault } = vaultSetup(t, { limits: { maxTextChars: 40, maxSources: 1, maxTags: 1 } });
  assert.deepEqual(await vault.ingest({ partition: "User", text: "x" }), refused("memory_record_invalid"));
  assert.deepEqual(await vault.ingest({ partition: "user", text: " \n " }), refused("memory_record_invalid"));
  assert.deepEqual(await vault.ingest({ partition: "user", text: "x".repeat(41) }), refused("memory_limit_exceeded"));
  assert.deepEqual(await vault.ingest({ partition: "user", text: "x", tags: ["Bad Tag"] }), refused("memory_record_invalid"));
  assert.deepEqual(await vault.ingest({ partition: "user", text: "x", tags: ["origin:ingest"] }), refused("memory_record_invalid"));
  assert.deepEqual(await vault.ingest({ partition: "user", text: "x", tags: ["a", "b"] }), refused("memory_limit_exceeded"));
  assert.deepEqual(await vault.ingest({ partition: "user", text: "x", sources: [{ ref: "a", sha256: HASH }, { ref: "b", sha256: HASH }] }), refused("memory_limit_exceeded"));
  assert.deepEqual(await vault.ingest({ partition: "user", text: "x", sources: [{ ref: "a", sha256: "nothex" }] }), refused("memory_record_invalid"));
});

test("P-ARC-20 search filters by partition before scoring: another partition neither appears nor shifts scores", async (t) => {
  const { vault } = vaultSetup(t);
  value(await vault.ingest({ partition: "project", text: "Deploy the release on Friday." }));
  value(await vault.ingest({ partition: "project", text: "Release notes need a draft." }));
  const alone = value(await vault.search({ partitions: ["project"], query: "release friday" }));
  for (let i = 0; i < 6; i += 1) value(await vault.ingest({ partition: "workspace", text: `release release release ${i}` }));
  const after = value(await vault.search({ partitions: ["project"], query: "release friday" }));
  assert.deepEqual(after, alone);
  assert.deepEqual(alone.candidates.map((c) => c.id), ["project:ep-0001", "project:ep-0002"]);
  const both = value(await vault.search({ partitions: ["project", "workspace"], query: "release", limit: 3 }));
  assert.equal(both.candidates.length, 3);
  assert.deepEqual(await vault.search({ partitions: [], query: "x" }), refused("memory_record_invalid"));
  assert.deepEqual(await vault.search({ partitions: ["user"], query: "x", limit: 0 }), refused("memory_limit_exceeded"));
});

test("P-MEM-13 P-MEM-17 an existing vault's records are screened before they become candidates; forgotten and superseded ones never are", async (t) => {
  const { vault, root } = vaultSetup(t, { fromFixture: true });
  writeFileSync(join(root, "user", "records", "ep-leak.md"), episodeDoc("ep-leak", 1, `deploy token ${CANARY_KEY} for fridays`));
  writeFileSync(join(root, "user", "records", "ep-marked.md"), episodeDoc("ep-marked", 1, "deploy on fridays [redacted:openai_api_key]"));
  writeFileSync(join(root, "user", "records", "ep-broken.md"), "---\nschema: 9\n---\nfridays deploys\n");
  const found = value(await vault.search({ partitions: ["user"], query: "deploys fridays freeze" }));
  assert.deepEqual(found.candidates.map((c) => c.id), ["user:ep-promoted"]);
  assert.deepEqual(found.rejected.sort(), ["user:ep-leak", "user:ep-marked"]);
  assert.deepEqual(found.invalid, ["user:ep-broken"]);
  assert.ok(!JSON.stringify(found).includes(CANARY_KEY));
  const recent = value(await vault.search({ partitions: ["user"], query: "" }));
  assert.ok(!recent.candidates.some((c) => c.id === "user:ep-forgotten" || c.id === "user:ep-superseded"));
  assert.equal(recent.candidates[0]!.score, 0);
  assert.deepEqual(readdirSync(join(root, "user", "records")).length, 9, "search writes nothing");
});

test("P-ARC-20 P-MEM-17 text carrying the service's recalled-memory tag is refused memory_recalled_content and nothing is written", async (t) => {
  const { vault, root } = vaultSetup(t);
  // What the agent saw, pasted back by a user or an application: the rendered entry, its opening or closing tag alone.
  const rendered = `<${RECALLED_MEMORY_TAG} id="user/ep-0001" origin="recall" updated="2026-04-01T00:00:01Z" sources="0">\nThe release train leaves on Tuesdays.\n</${RECALLED_MEMORY_TAG}>`;
  for (const text of [rendered, `remember: <${RECALLED_MEMORY_TAG} id="x">`, `the end</${RECALLED_MEMORY_TAG}>`]) {
    assert.deepEqual(await vault.ingest({ partition: "user", text }), refused("memory_recalled_content"));
  }
  assert.deepEqual(await vault.ingest({ partition: "user", text: "clean", sources: [{ ref: `note:<${RECALLED_MEMORY_TAG}>`, sha256: HASH }] }), refused("memory_recalled_content"));
  assert.equal(existsSync(join(root, "user")), false, "nothing reached the disk");
  // The words alone are an ordinary memory.
  assert.equal(value(await vault.ingest({ partition: "user", text: "recalled-memory is the tag name the service renders" })).duplicate, false);
});

test("P-ARC-20 P-MEM-02 the vault's candidates (ids `<partition>/<id>`) pass the service's strict candidate reading unchanged", async (t) => {
  const { vault } = vaultSetup(t);
  value(await vault.ingest({ partition: "user", text: "The staging database moved to host b.", sources: [{ ref: "chat:thread-1", sha256: HASH }] }));
  value(await vault.ingest({ partition: "project", text: "The staging database is backed up nightly." }));
  const candidates = value(await vault.candidates({ partitions: ["user", "project"], query: "staging database" }));
  assert.deepEqual(candidates.map((c) => c.id).sort(), ["project/ep-0002", "user/ep-0001"]);
  const read = readCandidates({ candidates }, 64);
  assert.deepEqual(read, { candidates, invalid: 0, rejected: 0, duplicates: 0 });
});
