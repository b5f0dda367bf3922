// The group memory profile's records and lexical index (schema 1): claims
// merge, supersede and forget (tombstone + exclusion), partitions filtered
// before scoring, records scanned before they are written or indexed, and
// the lexical index rebuilt at open without an embedding call.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test, type TestContext } from "node:test";
import { openSqliteGroupDatabase } from "../../../src/memory/group/sqlite-database.ts";
import { openGroupMemory, parseGroupRef, type GroupMemory, type GroupMemoryOptions } from "../../../src/memory/group/profile.ts";
import { compareRecency, tokenize } from "../../../src/memory/ranking.ts";
import { claim, CountingProvider, groupDbPath, realRedactor } from "../../support/group-memory.ts";

const SECRET = "sk-proj-CANARYabcdefghijklmnopqrstuvwxyz012345";

function open(t: TestContext, path: string, extra: Partial<GroupMemoryOptions> = {}): GroupMemory {
  const { redactor } = realRedactor(t);
  const opened = openGroupMemory({ db: openSqliteGroupDatabase({ path }), capture: { redactor }, ...extra });
  assert.ok(opened.ok);
  t.after(() => opened.value.close());
  return opened.value;
}

function remember(m: GroupMemory, partition: string, text: string, by = "alice", ref = "msg-1") {
  const r = m.remember({ partition, text, claim: claim(by, ref) });
  assert.ok(r.ok, `remember ${text}: ${r.ok ? "" : r.error.code}`);
  return r.value;
}

test("P-MEM-07 schema 1: a record keeps partition, text, claims, lifecycle, times and revision across a reopen", async (t) => {
  const path = groupDbPath(t);
  let clock = Date.parse("2026-01-02T03:04:05.000Z");
  const first = open(t, path, { now: () => new Date(clock) });
  const a = remember(first, "group:tea/channel:general", "The team meets on Tuesdays at ten", "alice", "msg-1");
  assert.deepEqual({ ...a, id: "x" }, {
    schema: 1, id: "x", partition: "group:tea/channel:general", text: "The team meets on Tuesdays at ten",
    claims: [{ ...claim("alice", "msg-1"), at: "2026-01-02T03:04:05.000Z" }], status: "active", supersededBy: null,
    createdAt: "2026-01-02T03:04:05.000Z", updatedAt: "2026-01-02T03:04:05.000Z", revision: 1,
  });
  // The same statement again (case and punctuation aside) adds a claim, not a record.
  clock += 1_000;
  const again = remember(first, "group:tea/channel:general", "the team meets on TUESDAYS, at ten!", "bob", "msg-7");
  assert.equal(again.id, a.id);
  assert.equal(again.revision, 2);
  assert.deepEqual(again.claims.map((c) => c.by), ["alice", "bob"]);
  await first.close();
  const second = open(t, path);
  const read = second.get("group:tea/channel:general", a.id);
  assert.ok(read.ok);
  assert.deepEqual(read.value, again);
  // Another partition does not see it, by id or by listing.
  assert.equal(second.get("group:other", a.id).ok, false);
  assert.deepEqual(second.list("group:other"), { ok: true, value: [] });
});

test("P-MEM-07 supersede and forget: lifecycle, revisions, tombstone and exclusion", (t) => {
  const path = groupDbPath(t);
  const m = open(t, path);
  const p = "group:tea";
  const old = remember(m, p, "Standup is at nine");
  assert.deepEqual(m.supersede(p, old.id, 5, { text: "Standup is at half past nine", claim: claim("bob", "msg-2") }), { ok: false, error: { code: "memory_revision_conflict", retryable: true } });
  const replaced = m.supersede(p, old.id, 1, { text: "Standup is at half past nine", claim: claim("bob", "msg-2") });
  assert.ok(replaced.ok);
  assert.equal(replaced.value.previous.status, "superseded");
  assert.equal(replaced.value.previous.supersededBy, replaced.value.record.id);
  assert.equal(replaced.value.previous.revision, 2);
  const forgotten = m.forget(p, replaced.value.record.id, 1);
  assert.ok(forgotten.ok);
  assert.equal(forgotten.value.status, "forgotten");
  assert.equal(forgotten.value.text, "");
  assert.equal(forgotten.value.revision, 2);
  // Re-ingesting the forgotten text is refused; the superseded one is not searchable either.
  assert.deepEqual(m.remember({ partition: p, text: "standup is at HALF past nine", claim: claim("carol", "msg-3") }), { ok: false, error: { code: "memory_excluded", retryable: false } });
  assert.deepEqual(m.list(p, { status: "active" }), { ok: true, value: [] });
  // The index kept in step by these writes is exactly what a rebuild from the records makes.
  const raw = openSqliteGroupDatabase({ path });
  raw.run("INSERT INTO group_records_fts (group_records_fts, rank) VALUES ('integrity-check', 1)");
  raw.close();
});

test("P-MEM-06 partitions are filtered before scoring: another partition's better matches never crowd out or leak", async (t) => {
  const m = open(t, groupDbPath(t));
  for (let i = 0; i < 30; i++) remember(m, "group:b", `deploy deploy deploy friday note ${i}`);
  remember(m, "group:a", "we deploy on friday afternoons");
  remember(m, "group:a", "lunch is at noon");
  const r = await m.search({ partitions: ["group:a"], text: "deploy friday", limit: 1 });
  assert.ok(r.ok);
  assert.deepEqual(r.value.hits.map((h) => h.record.text), ["we deploy on friday afternoons"]);
  const both = await m.search({ partitions: ["group:a", "group:b"], text: "deploy", limit: 50 });
  assert.ok(both.ok);
  assert.equal(both.value.hits.length, 31);
  const unknown = await m.search({ partitions: ["group:nobody"], text: "deploy" });
  assert.deepEqual(unknown, { ok: true, value: { hits: [], vector: "off" } });
});

test("P-MEM-06 lexical ranking uses the shared tokenizer and the shared recency tie-break", async (t) => {
  let clock = Date.parse("2026-03-01T00:00:00.000Z");
  const m = open(t, groupDbPath(t), { now: () => new Date((clock += 1_000)) });
  const older = remember(m, "g", "Café opens at 8");
  const newer = remember(m, "g", "CAFÉ opens at 9");
  // NFKC + lower case, letters and digits only: "ＣＡＦÉ" is the token "café".
  assert.deepEqual(tokenize("ＣＡＦÉ"), ["café"]);
  const r = await m.search({ partitions: ["g"], text: "ＣＡＦÉ?" });
  assert.ok(r.ok);
  assert.deepEqual(r.value.hits.map((h) => h.record.id), [newer.id, older.id]);
  assert.equal(r.value.hits[0]?.score, r.value.hits[1]?.score);
  assert.equal(compareRecency(newer, older), -1);
  assert.deepEqual(await m.search({ partitions: ["g"], text: "?!" }), { ok: true, value: { hits: [], vector: "off" } });
  // Equal scores across the limit: the newer record wins the one place.
  const third = remember(m, "g", "Café opens at 10");
  const one = await m.search({ partitions: ["g"], text: "café", limit: 1 });
  assert.ok(one.ok);
  assert.deepEqual(one.value.hits.map((h) => h.record.id), [third.id]);
  // A tie group longer than the rows fetched past the cut is ordered inside SQLite: still the newest first.
  const many = Array.from({ length: 60 }, (_, i) => remember(m, "g", `Café closes at ${i + 11}`));
  const two = await m.search({ partitions: ["g"], text: "closes", limit: 2 });
  assert.ok(two.ok);
  assert.deepEqual(two.value.hits.map((h) => h.record.id), [many[59]?.id, many[58]?.id]);
});

test("P-MEM-13 records are scanned before they are written or indexed: a secret is refused and never stored", (t) => {
  const path = groupDbPath(t);
  const m = open(t, path);
  assert.deepEqual(m.remember({ partition: "g", text: `the deploy key is ${SECRET}`, claim: claim("alice", "m1") }), { ok: false, error: { code: "candidate_rejected", retryable: false } });
  assert.deepEqual(m.remember({ partition: "g", text: "note", claim: { by: "alice", ref: `evidence ${SECRET}`, sha256: claim("a", "b").sha256 } }), { ok: false, error: { code: "candidate_rejected", retryable: false } });
  assert.deepEqual(m.remember({ partition: "g", text: "it said [redacted:openai_api_key] here", claim: claim("alice", "m1") }), { ok: false, error: { code: "candidate_rejected", retryable: false } });
  assert.deepEqual(m.remember({ partition: "g", text: "recalled earlier", claim: claim("alice", "m1"), origin: "recall" }), { ok: false, error: { code: "memory_recalled_content", retryable: false } });
  // A rendered recall block pasted back without the origin tag is refused too (no recall feedback loop).
  assert.deepEqual(m.remember({ partition: "g", text: 'he said <recalled-memory id="g/r1">tea at five</recalled-memory>', claim: claim("alice", "m1") }), { ok: false, error: { code: "memory_recalled_content", retryable: false } });
  assert.deepEqual(m.remember({ partition: "g", text: "a fact", claim: { by: "alice", ref: "</recalled-memory>", sha256: claim("a", "b").sha256 } }), { ok: false, error: { code: "memory_recalled_content", retryable: false } });
  remember(m, "g", "a harmless fact");
  const bytes = Buffer.concat([readFileSync(path), readFileSync(`${path}-wal`)]);
  assert.equal(bytes.includes("CANARY"), false);
  assert.equal(bytes.includes("recalled earlier"), false);
  assert.ok(bytes.includes("a harmless fact"));
});

test("P-MEM-13 a failed scanner fails the write closed: nothing written, nothing indexed", async (t) => {
  const { redactor, scanner } = realRedactor(t);
  const opened = openGroupMemory({ db: openSqliteGroupDatabase({ path: ":memory:" }), capture: { redactor } });
  assert.ok(opened.ok);
  const m = opened.value;
  t.after(() => m.close());
  await scanner.close();
  assert.deepEqual(m.remember({ partition: "g", text: "a fact long enough to be scanned by the worker", claim: claim("alice", "m1") }), { ok: false, error: { code: "scanner_unavailable", retryable: false } });
  assert.deepEqual(m.list("g"), { ok: true, value: [] });
  const r = await m.search({ partitions: ["g"], text: "fact" });
  assert.deepEqual(r, { ok: true, value: { hits: [], vector: "off" } });
});

test("P-MEM-09 startup rebuilds the lexical index from the records with no embedding call", async (t) => {
  const path = groupDbPath(t);
  const provider = new CountingProvider();
  const first = open(t, path, { embeddings: provider });
  for (let i = 0; i < 50; i++) remember(first, `g${i % 3}`, `record number ${i} about topic${i % 7}`);
  await first.drained();
  const embeddedBefore = provider.calls;
  assert.ok(embeddedBefore > 0, "new data was embedded");
  await first.close();
  // Damage the index: the rebuild at open must restore it from the records.
  const raw = openSqliteGroupDatabase({ path });
  raw.run("INSERT INTO group_records_fts (group_records_fts) VALUES ('delete-all')");
  raw.close();
  const fresh = new CountingProvider();
  const second = open(t, path, { embeddings: fresh });
  assert.deepEqual({ records: second.startup.records, vectors: second.startup.vectorsLoaded }, { records: 50, vectors: 50 });
  const r = await second.search({ partitions: ["g1"], text: "topic3", limit: 50 });
  assert.ok(r.ok);
  assert.deepEqual(r.value.hits.map((h) => h.record.text).sort(), ["record number 10 about topic3", "record number 31 about topic3"]);
  await second.drained();
  assert.equal(fresh.calls, 0, "no embedding at startup or for a lexical search");
  assert.equal(second.embeddingStatus().pending, 0);
});

test("P-MEM-07 a database of another schema version is refused, not rewritten", (t) => {
  const path = groupDbPath(t);
  const raw = openSqliteGroupDatabase({ path });
  raw.exec("CREATE TABLE group_memory_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT; INSERT INTO group_memory_meta VALUES ('schema', '2')");
  const { redactor } = realRedactor(t);
  assert.deepEqual(openGroupMemory({ db: raw, capture: { redactor } }), { ok: false, error: { code: "memory_schema_unsupported", retryable: false } });
  assert.equal(raw.get("SELECT value FROM group_memory_meta WHERE key = 'schema'")?.value, "2");
  raw.close();
});

test("P-MEM-13 recall screens what it reads again: a record changed behind the profile's back is refused by id", async (t) => {
  const path = groupDbPath(t);
  const m = open(t, path);
  const clean = remember(m, "group:tea/channel:ops", "backups run nightly at two");
  const tampered = remember(m, "group:tea/channel:ops", "backups are kept for thirty days");
  // Another writer puts a secret into a stored record (the index is untouched).
  const raw = openSqliteGroupDatabase({ path });
  raw.run("UPDATE group_records SET text = ? WHERE id = ?", [`backups are kept for thirty days, key ${SECRET}`, tampered.id]);
  raw.close();
  const r = await m.recall({ partitions: ["group:tea/channel:ops"], text: "backups" });
  assert.ok(r.ok);
  assert.deepEqual(r.value.rejected, [`group:tea/channel:ops/${tampered.id}`]);
  assert.deepEqual(r.value.kept.map((c) => ({ id: c.id, origin: c.origin, sources: c.sources })), [
    { id: `group:tea/channel:ops/${clean.id}`, origin: "recall", sources: [{ ref: "msg-1", sha256: claim("alice", "msg-1").sha256 }] },
  ]);
  assert.deepEqual(parseGroupRef(r.value.kept[0]?.id ?? ""), { partition: "group:tea/channel:ops", id: clean.id });
  assert.equal(parseGroupRef("no-slash"), null);
  // Text that came out of recall is never stored again.
  assert.deepEqual(m.remember({ partition: "group:tea/channel:ops", text: r.value.kept[0]?.text ?? "", claim: claim("bot", "recall"), origin: "recall" }), { ok: false, error: { code: "memory_recalled_content", retryable: false } });
});
