// The Deno lane for group memory: Deno's node:sqlite has FTS5, bm25() and
// generated columns, so the same profile writes, searches (lexical and
// hybrid), rebuilds its index at open without an embedding call, and keeps
// the index equal to a rebuild.
import assert from "node:assert/strict";
import { test } from "node:test";
import { openGroupMemory } from "../../src/memory/group/profile.ts";
import { openSqliteGroupDatabase } from "../../src/memory/group/sqlite-database.ts";
import { claim, CountingProvider, groupDbPath, realRedactor } from "../support/group-memory.ts";

test("P-MEM-09 group memory on Deno: write, lexical and hybrid search, rebuild at open with no embedding call", async (t) => {
  const path = groupDbPath(t);
  const capture = realRedactor(t);
  const provider = new CountingProvider(16);
  const opened = openGroupMemory({ db: openSqliteGroupDatabase({ path }), capture, embeddings: provider });
  assert.ok(opened.ok);
  const m = opened.value;
  for (const text of ["deploys happen on friday", "lunch is at noon", "the friday deploy needs a review"]) {
    assert.ok(m.remember({ partition: "group:a", text, claim: claim("alice", text) }).ok);
  }
  await m.drained();
  const lexical = await m.search({ partitions: ["group:a"], text: "friday deploy" });
  assert.ok(lexical.ok);
  assert.equal(lexical.value.hits.length, 2);
  const hybrid = await m.search({ partitions: ["group:a"], text: "friday deploy", mode: "hybrid" });
  assert.ok(hybrid.ok);
  assert.equal(hybrid.value.vector, "used");
  await m.close();
  const fresh = new CountingProvider(16);
  const again = openGroupMemory({ db: openSqliteGroupDatabase({ path }), capture: realRedactor(t), embeddings: fresh });
  assert.ok(again.ok);
  t.after(() => again.value.close());
  assert.deepEqual({ records: again.value.startup.records, vectors: again.value.startup.vectorsLoaded, calls: fresh.calls }, { records: 3, vectors: 3, calls: 0 });
  const raw = openSqliteGroupDatabase({ path });
  raw.run("INSERT INTO group_records_fts (group_records_fts, rank) VALUES ('integrity-check', 1)");
  raw.close();
});

test("P-MEM-06 the vector index's SIMD kernel runs on Deno", async () => {
  const { VectorIndex, normalize } = await import("../../src/memory/group/vectors.ts");
  const index = new VectorIndex(6, 1);
  assert.equal(index.simd, true);
  const v = (xs: number[]) => {
    const f = Float32Array.from(xs);
    normalize(f);
    return f;
  };
  index.upsert(1, 1, "a", "2026-01-01T00:00:00.000Z", v([1, 0, 0, 0, 0, 1]));
  index.upsert(2, 1, "b", "2026-01-01T00:00:00.000Z", v([0, 1, 0, 0, 0, 0]));
  index.upsert(3, 2, "c", "2026-01-01T00:00:00.000Z", v([1, 0, 0, 0, 0, 1]));
  assert.deepEqual(index.top(v([1, 0, 0, 0, 0, 1]), new Set([1]), 5).map((h) => h.id), ["a", "b"]);
});
