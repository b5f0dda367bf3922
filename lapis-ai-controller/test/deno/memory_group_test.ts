// The Deno lane for group memory: Deno's node:sqlite has FTS5, bm25() and
// generated columns, so the same profile writes, searches (lexical and
// hybrid), rebuilds its index at open without an embedding call, and keeps
// the index equal to a rebuild; the pruned lexical path answers as the full one.
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

test("P-GRP-01 on Deno's SQLite the pruned lexical path answers exactly what the full path answers", async (t) => {
  const { lexicalSearch } = await import("../../src/memory/group/lexical.ts");
  const { createPrng } = await import("../support/chaos-prng.ts");
  const db = openSqliteGroupDatabase({ path: ":memory:" });
  const opened = openGroupMemory({ db, capture: realRedactor(t) });
  assert.ok(opened.ok);
  const m = opened.value;
  t.after(() => m.close());
  const random = createPrng(5);
  const words = (n: number) => Array.from({ length: n }, () => `w${Math.floor(Math.pow(200, random())).toString(36)}`).join(" ");
  for (let i = 0; i < 600; i++) assert.ok(m.remember({ partition: "g", text: `${words(1 + Math.floor(random() * 25))} n${i}`, claim: claim("a", `r${i}`) }).ok);
  for (let i = 0; i < 60; i++) assert.ok(m.remember({ partition: "g", text: `zeta w1 fa${i} fb${i}`, claim: claim("a", `z${i}`) }).ok);
  const no = Number(db.get("SELECT no FROM group_partitions WHERE id = 'g'")?.no);
  const plans: string[] = [];
  const traced = { ...db, all: (sql: string, params?: readonly (string | number | bigint | null | Uint8Array)[]) => (plans.push(sql), db.all(sql, params)) };
  const queries = ["zeta w1", "zeta w1 w2", ...Array.from({ length: 40 }, () => words(2 + Math.floor(random() * 3)))];
  for (const query of queries) {
    for (const depth of [1, 5, 20]) {
      const full = lexicalSearch(db, [no], query, depth, { from: Number.POSITIVE_INFINITY });
      assert.deepEqual(lexicalSearch(traced, [no], query, depth, { from: 0 }), full, `${query} at ${depth}`);
    }
  }
  assert.ok(plans.filter((sql) => sql.includes("+rowid IN")).length > 30, "the pruned path ran");
});

test("P-GRP-02 on Deno the coarse int8 pass runs and answers exactly what scoring every vector answers", async () => {
  const { VectorIndex, normalize } = await import("../../src/memory/group/vectors.ts");
  const dims = 64;
  let seed = 3;
  const next = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const random = () => {
    const v = Float32Array.from({ length: dims }, () => next() * 2 - 1);
    normalize(v);
    return v;
  };
  const auto = new VectorIndex(dims, 1, "auto");
  const exact = new VectorIndex(dims, 1, "exact");
  for (let i = 0; i < 4_000; i++) {
    const v = random();
    for (const index of [auto, exact]) index.upsert(i, i % 4 === 3 ? 2 : 1, `id${i}`, "2026-01-01", v);
  }
  for (let round = 0; round < 10; round++) {
    const q = random();
    assert.deepEqual(auto.top(q, new Set([1]), 20), exact.top(q, new Set([1]), 20));
    assert.ok(auto.scored < exact.scored && exact.scored === 3_000);
  }
});
