// The record-store port contract (P-MEM-01): every vault record store, in
// memory or on disk, must pass the same suite: revisions, preimages,
// partition-scoped listing, exclusions and the maintenance lease.
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import { serializeEpisode, type Episode } from "../../src/memory/lapis/episode.ts";
import type { MemoryRecordStore, StoredRecord } from "../../src/memory/ports.ts";

const HASH = "a".repeat(64);

/** A schema-1 episode document for `id` at `revision`. */
export function episodeDoc(id: string, revision: number, text: string, extra: Partial<Episode> = {}): string {
  return serializeEpisode({
    schema: 1, id, created: "2026-03-01T00:00:00.000Z", updated: "2026-03-01T00:00:00.000Z", revision, tier: "episode", state: "active",
    supersededBy: null, tags: ["origin:ingest"], sources: [{ ref: "thread:t#m", sha256: HASH }], body: `${text}\n`, newline: "\n", ...extra,
  });
}

export function record(partition: string, id: string, revision: number, text: string): StoredRecord {
  return { partition, id, revision, content: episodeDoc(id, revision, text) };
}

type Factory = (t: TestContext, now: () => number) => MemoryRecordStore;

/** Registers the contract suite for one store implementation. */
export function recordStoreContract(name: string, make: Factory): void {
  const fixed = () => Date.parse("2026-03-01T00:00:00.000Z");

  test(`P-MEM-01 ${name}: create, read back, replace with the expected revision; a stale revision conflicts`, async (t) => {
    const store = make(t, fixed);
    assert.deepEqual(await store.get("user", "ep-1"), { ok: true, value: null });
    const first = record("user", "ep-1", 1, "first");
    assert.deepEqual(await store.put(first, 0), { ok: true, value: first });
    assert.deepEqual(await store.get("user", "ep-1"), { ok: true, value: first });
    assert.deepEqual(await store.put(record("user", "ep-1", 1, "again"), 0), { ok: false, error: { code: "memory_revision_conflict", retryable: false } });
    const second = record("user", "ep-1", 2, "second");
    assert.deepEqual(await store.put(second, 1), { ok: true, value: second });
    assert.deepEqual(await store.put(record("user", "ep-1", 2, "stale"), 1), { ok: false, error: { code: "memory_revision_conflict", retryable: false } });
    assert.deepEqual(await store.get("user", "ep-1"), { ok: true, value: second });
  });

  test(`P-MEM-01 ${name}: every replace keeps the replaced content as a preimage, oldest first`, async (t) => {
    const store = make(t, fixed);
    await store.put(record("user", "ep-1", 1, "one"), 0);
    await store.put(record("user", "ep-1", 2, "two"), 1);
    await store.put(record("user", "ep-1", 3, "three"), 2);
    const preimages = await store.preimages("user", "ep-1");
    assert.deepEqual(preimages, { ok: true, value: [{ revision: 1, content: episodeDoc("ep-1", 1, "one") }, { revision: 2, content: episodeDoc("ep-1", 2, "two") }] });
    assert.deepEqual(await store.preimages("user", "ep-none"), { ok: true, value: [] });
  });

  test(`P-MEM-01 ${name}: a record must declare revision expected+1; names follow the grammar`, async (t) => {
    const store = make(t, fixed);
    const invalid = { ok: false, error: { code: "memory_record_invalid", retryable: false } };
    assert.deepEqual(await store.put(record("user", "ep-1", 2, "skips a revision"), 0), invalid);
    assert.deepEqual(await store.put({ ...record("user", "ep-1", 1, "x"), revision: 1, content: episodeDoc("ep-1", 5, "x") }, 0), invalid);
    assert.deepEqual(await store.put(record("User", "ep-1", 1, "x"), 0), invalid);
    assert.deepEqual(await store.put(record("user", "../ep", 1, "x"), 0), invalid);
    assert.deepEqual(await store.get("user", "../../etc/passwd"), invalid);
    assert.deepEqual(await store.list("../user"), invalid);
  });

  test(`P-MEM-01 P-ARC-20 ${name}: list returns one partition only, ordered by id`, async (t) => {
    const store = make(t, fixed);
    await store.put(record("user", "ep-b", 1, "b"), 0);
    await store.put(record("user", "ep-a", 1, "a"), 0);
    await store.put(record("project", "ep-c", 1, "c"), 0);
    const users = await store.list("user");
    assert.ok(users.ok);
    assert.deepEqual(users.value.map((r) => `${r.partition}:${r.id}`), ["user:ep-a", "user:ep-b"]);
    assert.deepEqual(await store.list("workspace"), { ok: true, value: [] });
  });

  test(`P-MEM-01 ${name}: exclusions are per partition, one per hash, removable`, async (t) => {
    const store = make(t, fixed);
    const entry = { sha256: "b".repeat(64), recordId: "ep-1", at: "2026-03-01T00:00:00.000Z" };
    assert.deepEqual(await store.addExclusion("user", entry), { ok: true, value: undefined });
    assert.deepEqual(await store.addExclusion("user", { ...entry, recordId: "ep-2" }), { ok: true, value: undefined });
    assert.deepEqual(await store.exclusions("user"), { ok: true, value: [entry] });
    assert.deepEqual(await store.exclusions("project"), { ok: true, value: [] });
    assert.deepEqual(await store.removeExclusion("user", entry.sha256), { ok: true, value: undefined });
    assert.deepEqual(await store.exclusions("user"), { ok: true, value: [] });
  });

  test(`P-MEM-01 ${name}: the maintenance lease has one holder until released or expired; a lost lease fails its check`, async (t) => {
    let clock = Date.parse("2026-03-01T00:00:00.000Z");
    const store = make(t, () => clock);
    const a = await store.acquireLease("consolidate.user", "a", 1_000);
    assert.ok(a.ok);
    assert.deepEqual(await a.value.check(), { ok: true, value: undefined });
    assert.deepEqual(await store.acquireLease("consolidate.user", "b", 1_000), { ok: false, error: { code: "memory_lease_held", retryable: true } });
    assert.ok((await store.acquireLease("consolidate.project", "b", 1_000)).ok, "leases are per name");
    await a.value.release();
    const b = await store.acquireLease("consolidate.user", "b", 1_000);
    assert.ok(b.ok);
    clock += 1_001;
    assert.deepEqual(await b.value.check(), { ok: false, error: { code: "memory_lease_lost", retryable: false } });
    const c = await store.acquireLease("consolidate.user", "c", 1_000);
    assert.ok(c.ok, "an expired lease is taken over");
    assert.deepEqual(await b.value.check(), { ok: false, error: { code: "memory_lease_lost", retryable: false } });
    await b.value.release();
    assert.deepEqual(await c.value.check(), { ok: true, value: undefined }, "releasing a lost lease leaves the new holder's alone");
    assert.deepEqual(await store.acquireLease("consolidate.user", "d", 0), { ok: false, error: { code: "memory_limit_exceeded", retryable: false } });
  });
}
