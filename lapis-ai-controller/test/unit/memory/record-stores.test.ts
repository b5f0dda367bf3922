// The two vault record stores pass the port contract (P-MEM-01); the
// Markdown-files store keeps its guarantees across store instances and
// processes over one directory (P-MEM-04: preimages, exclusions, leases).
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { MarkdownFilesStore } from "../../../src/memory/lapis/files-store.ts";
import { InMemoryRecordStore } from "../../../src/memory/lapis/memory-store.ts";
import { episodeDoc, record, recordStoreContract } from "../../support/memory-store-contract.ts";
import { tempDir } from "../../support/temp.ts";

recordStoreContract("in-memory store", (_t, now) => new InMemoryRecordStore({ now }));
recordStoreContract("Markdown-files store", (t, now) => new MarkdownFilesStore(tempDir(t, "aic-mem-"), { now }));

test("P-MEM-04 the files store lays records, preimages and exclusions out as documented, with no temporary files left", async (t) => {
  const root = tempDir(t, "aic-mem-");
  const store = new MarkdownFilesStore(root);
  await store.put(record("user", "ep-1", 1, "one"), 0);
  await store.put(record("user", "ep-1", 2, "two"), 1);
  await store.addExclusion("user", { sha256: "c".repeat(64), recordId: "ep-1", at: "2026-03-01T00:00:00.000Z" });
  assert.equal(readFileSync(join(root, "user", "records", "ep-1.md"), "utf8"), episodeDoc("ep-1", 2, "two"));
  assert.equal(readFileSync(join(root, "user", "preimages", "ep-1", "1.md"), "utf8"), episodeDoc("ep-1", 1, "one"));
  assert.equal(readFileSync(join(root, "user", "exclusions.txt"), "utf8"), `# memory exclusions, schema 1\n${"c".repeat(64)} ep-1 2026-03-01T00:00:00.000Z\n`);
  assert.deepEqual(readdirSync(join(root, "user", "records")), ["ep-1.md"]);
  assert.deepEqual(readdirSync(join(root, "user", "preimages", "ep-1")), ["1.md"]);
  assert.deepEqual(readdirSync(join(root, "user")).sort(), ["exclusions.txt", "preimages", "records"]);
});

test("P-MEM-04 two files stores over one directory: one writer of a revision wins, the other conflicts", async (t) => {
  const root = tempDir(t, "aic-mem-");
  const a = new MarkdownFilesStore(root);
  const b = new MarkdownFilesStore(root);
  assert.ok((await a.put(record("user", "ep-1", 1, "one"), 0)).ok);
  assert.deepEqual(await b.put(record("user", "ep-1", 1, "other"), 0), { ok: false, error: { code: "memory_revision_conflict", retryable: false } });
  const results = await Promise.all([a.put(record("user", "ep-1", 2, "from a"), 1), b.put(record("user", "ep-1", 2, "from b"), 1)]);
  assert.deepEqual(results.map((r) => r.ok).sort(), [false, true]);
  const winner = results[0]!.ok ? "from a" : "from b";
  assert.deepEqual(await b.get("user", "ep-1"), { ok: true, value: record("user", "ep-1", 2, winner) });
  assert.deepEqual(await a.preimages("user", "ep-1"), { ok: true, value: [{ revision: 1, content: episodeDoc("ep-1", 1, "one") }] });
});

test("P-MEM-04 a preimage left by a crashed writer blocks the revision until it is old, then is reused", async (t) => {
  const root = tempDir(t, "aic-mem-");
  let clock = Date.now();
  const store = new MarkdownFilesStore(root, { now: () => clock, limits: { orphanAfterMs: 60_000 } });
  await store.put(record("user", "ep-1", 1, "one"), 0);
  // The crashed writer created the preimage of revision 1 but never renamed its new revision in.
  mkdirSync(join(root, "user", "preimages", "ep-1"), { recursive: true });
  writeFileSync(join(root, "user", "preimages", "ep-1", "1.md"), episodeDoc("ep-1", 1, "one"));
  assert.deepEqual(await store.put(record("user", "ep-1", 2, "two"), 1), { ok: false, error: { code: "memory_revision_conflict", retryable: false } });
  clock += 61_000;
  assert.ok((await store.put(record("user", "ep-1", 2, "two"), 1)).ok);
});

test("P-MEM-04 the files store reads an unparsable record as revision 0 and refuses oversized documents", async (t) => {
  const root = tempDir(t, "aic-mem-");
  const store = new MarkdownFilesStore(root, { limits: { maxRecordBytes: 1024 } });
  mkdirSync(join(root, "user", "records"), { recursive: true });
  writeFileSync(join(root, "user", "records", "ep-bad.md"), "not a document\n");
  writeFileSync(join(root, "user", "records", "notes.txt"), "ignored: not a record file\n");
  assert.deepEqual(await store.get("user", "ep-bad"), { ok: true, value: { partition: "user", id: "ep-bad", revision: 0, content: "not a document\n" } });
  assert.deepEqual(await store.put(record("user", "ep-big", 1, "x".repeat(2000)), 0), { ok: false, error: { code: "memory_limit_exceeded", retryable: false } });
  writeFileSync(join(root, "user", "records", "ep-huge.md"), "y".repeat(2000));
  assert.deepEqual(await store.list("user"), { ok: false, error: { code: "memory_limit_exceeded", retryable: false } });
  assert.throws(() => new MarkdownFilesStore(root, { limits: { maxRecordBytes: 10 * 1024 * 1024 } }), RangeError);
});

test("P-MEM-04 a broken or expired lease file is taken over; a live one in another store is not", async (t) => {
  const root = tempDir(t, "aic-mem-");
  let clock = Date.parse("2026-03-01T00:00:00.000Z");
  const a = new MarkdownFilesStore(root, { now: () => clock });
  const b = new MarkdownFilesStore(root, { now: () => clock });
  mkdirSync(join(root, "_leases"), { recursive: true });
  writeFileSync(join(root, "_leases", "consolidate.user.lease"), "not json\n");
  const first = await a.acquireLease("consolidate.user", "a", 5_000);
  assert.ok(first.ok, "an unreadable lease file counts as expired");
  assert.deepEqual(await b.acquireLease("consolidate.user", "b", 5_000), { ok: false, error: { code: "memory_lease_held", retryable: true } });
  clock += 5_001;
  const second = await b.acquireLease("consolidate.user", "b", 5_000);
  assert.ok(second.ok, "an expired lease is taken over by another store");
  assert.deepEqual(await first.value.check(), { ok: false, error: { code: "memory_lease_lost", retryable: false } });
  assert.deepEqual(readdirSync(join(root, "_leases")), ["consolidate.user.lease"], "no aside files are left");
});

test("P-MEM-04 exclusion writes from two stores over one directory are both kept", async (t) => {
  const root = tempDir(t, "aic-mem-");
  const a = new MarkdownFilesStore(root);
  const b = new MarkdownFilesStore(root);
  const entry = (c: string) => ({ sha256: c.repeat(64), recordId: `ep-${c}`, at: "2026-03-01T00:00:00.000Z" });
  const held = await a.acquireLease("exclusions.user", "someone", 200);
  assert.ok(held.ok);
  setTimeout(() => void held.value.release(), 60);
  // b waits for the lock in short steps instead of failing or losing a's entry.
  const results = await Promise.all([b.addExclusion("user", entry("e")), a.addExclusion("user", entry("f"))]);
  assert.deepEqual(results, [{ ok: true, value: undefined }, { ok: true, value: undefined }]);
  assert.deepEqual((await b.exclusions("user")), { ok: true, value: [entry("e"), entry("f")] });
});

test("P-MEM-04 the files store re-reads a record an editor rewrote in place or replaced, even with the same size", async (t) => {
  const root = tempDir(t, "aic-mem-");
  const store = new MarkdownFilesStore(root);
  await store.put(record("user", "ep-1", 1, "alpha"), 0);
  assert.equal((await store.list("user")).ok, true);
  await new Promise((r) => setTimeout(r, 50)); // past the file system's timestamp granularity
  const path = join(root, "user", "records", "ep-1.md");
  writeFileSync(path, episodeDoc("ep-1", 1, "omega")); // same length, same inode
  assert.deepEqual(await store.get("user", "ep-1"), { ok: true, value: record("user", "ep-1", 1, "omega") });
  writeFileSync(`${path}.new`, episodeDoc("ep-1", 3, "gamma"));
  renameSync(`${path}.new`, path);
  assert.deepEqual(await store.list("user"), { ok: true, value: [record("user", "ep-1", 3, "gamma")] });
});
