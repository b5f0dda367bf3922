// Group search: hybrid ranking fuses the lexical (FTS5 bm25) and vector
// (brute-force cosine) rankings by reciprocal rank with the shared recency
// tie-break; the vector index scores only the asked partitions; a failed
// query embedding falls back to the lexical ranking and says so.
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import { lexicalSearch, matchExpression } from "../../../src/memory/group/lexical.ts";
import { openGroupMemory, type GroupMemory, type GroupMemoryOptions } from "../../../src/memory/group/profile.ts";
import { openSqliteGroupDatabase } from "../../../src/memory/group/sqlite-database.ts";
import { normalize, VectorIndex } from "../../../src/memory/group/vectors.ts";
import { fuseRrf } from "../../../src/memory/ranking.ts";
import { bagVector, claim, CountingProvider, realRedactor } from "../../support/group-memory.ts";

function open(t: TestContext, extra: Partial<GroupMemoryOptions> = {}): GroupMemory {
  const opened = openGroupMemory({ db: openSqliteGroupDatabase({ path: ":memory:" }), capture: realRedactor(t), ...extra });
  assert.ok(opened.ok);
  t.after(() => opened.value.close());
  return opened.value;
}

const unit = (values: number[]) => {
  const v = Float32Array.from(values);
  assert.ok(normalize(v));
  return v;
};

test("P-MEM-06 the vector index scores only the asked partitions and breaks ties by recency, then id", () => {
  const index = new VectorIndex(3, 1);
  index.upsert(1, 10, "b", "2026-01-01T00:00:00.000Z", unit([1, 0, 0]));
  index.upsert(2, 10, "a", "2026-01-01T00:00:00.000Z", unit([1, 0, 0]));
  index.upsert(3, 10, "c", "2026-02-01T00:00:00.000Z", unit([1, 0, 0]));
  index.upsert(4, 20, "z", "2026-03-01T00:00:00.000Z", unit([1, 0, 0]));
  index.upsert(5, 10, "d", "2026-03-01T00:00:00.000Z", unit([0, 1, 0]));
  const q = unit([1, 0.0, 0]);
  assert.deepEqual(index.top(q, new Set([10]), 3).map((h) => h.id), ["c", "a", "b"]);
  assert.deepEqual(index.top(q, new Set([20]), 10).map((h) => h.id), ["z"]);
  index.remove(3);
  index.remove(99);
  assert.deepEqual(index.top(q, new Set([10]), 10).map((h) => h.id), ["a", "b", "d"]);
  assert.equal(index.size, 4);
  assert.equal(normalize(new Float32Array(3)), false);
  assert.equal(normalize(Float32Array.from([Number.NaN, 1, 1])), false);
});

test("P-MEM-06 the SIMD kernel and the JavaScript loop score alike, across growth and removals, partition first", () => {
  const dims = 37; // not a multiple of four: rows are padded
  const simd = new VectorIndex(dims, 1);
  const js = new VectorIndex(dims, 1, "js");
  assert.equal(simd.simd, true, "Node has WebAssembly SIMD");
  assert.equal(js.simd, false);
  let seed = 7;
  const next = () => ((seed = (seed * 16807) % 2147483647) / 2147483647) - 0.5;
  const random = () => unit(Array.from({ length: dims }, next));
  for (let i = 0; i < 3_000; i++) {
    const v = random();
    for (const index of [simd, js]) index.upsert(i, i % 3, `id${String(i).padStart(5, "0")}`, "2026-01-01T00:00:00.000Z", v);
  }
  for (let i = 0; i < 3_000; i += 7) for (const index of [simd, js]) index.remove(i);
  for (let round = 0; round < 5; round++) {
    const q = random();
    const a = simd.top(q, new Set([1]), 25);
    const b = js.top(q, new Set([1]), 25);
    assert.deepEqual(a.map((h) => h.id), b.map((h) => h.id));
    a.forEach((h, i) => assert.ok(Math.abs(h.score - (b[i] as typeof h).score) < 1e-5));
    assert.ok(a.every((h) => h.rowNo % 3 === 1 && h.rowNo % 7 !== 0));
  }
});

test("P-MEM-06 hybrid search is the RRF fusion of the lexical and the vector ranking", async (t) => {
  const dims = 32;
  const provider = new CountingProvider(dims);
  let clock = Date.parse("2026-05-01T00:00:00.000Z");
  const m = open(t, { embeddings: provider, now: () => new Date((clock += 1_000)), limits: { candidateDepth: 10 } });
  const texts = ["deploy on friday", "friday lunch together", "deploy checklist review", "weekly planning notes", "friday friday friday"];
  const ids = new Map<string, string>();
  for (const text of texts) {
    const r = m.remember({ partition: "g", text, claim: claim("alice", text) });
    assert.ok(r.ok);
    ids.set(r.value.id, text);
  }
  await m.drained();
  const query = "friday deploy";
  const hybrid = await m.search({ partitions: ["g"], text: query, mode: "hybrid", limit: 5 });
  assert.ok(hybrid.ok);
  assert.equal(hybrid.value.vector, "used");
  // The same fusion computed from its parts: the lexical ranking and the vector ranking of the same texts.
  const lexical = await m.search({ partitions: ["g"], text: query, limit: 10 });
  assert.ok(lexical.ok);
  const q = bagVector(query, dims);
  normalize(q);
  const records = lexical.value.hits.map((h) => h.record);
  const all = m.list("g", { status: "active" });
  assert.ok(all.ok);
  const byVector = all.value.map((r) => {
    const v = bagVector(r.text, dims);
    normalize(v);
    let s = 0;
    for (let i = 0; i < dims; i++) s += (v[i] as number) * (q[i] as number);
    return { r, s };
  }).sort((x, y) => y.s - x.s || (x.r.updatedAt < y.r.updatedAt ? 1 : -1)).map((x) => x.r);
  const expected = fuseRrf([records, byVector]).map((x) => x.item.text);
  assert.deepEqual(hybrid.value.hits.map((h) => h.record.text), expected);
  assert.ok(hybrid.value.hits.every((h, i, a) => i === 0 || (a[i - 1] as typeof h).score >= h.score));
});

test("P-MEM-06 P-MEM-08 a failed query embedding falls back to the lexical ranking; without a provider hybrid is lexical", async (t) => {
  const provider = new CountingProvider(8);
  const m = open(t, { embeddings: provider });
  assert.ok(m.remember({ partition: "g", text: "coffee machine is broken", claim: claim("a", "r1") }).ok);
  await m.drained();
  provider.fail = () => "reject";
  const r = await m.search({ partitions: ["g"], text: "coffee", mode: "hybrid" });
  assert.ok(r.ok);
  assert.equal(r.value.vector, "embedding_failed");
  assert.deepEqual(r.value.hits.map((h) => h.record.text), ["coffee machine is broken"]);
  const plain = open(t);
  assert.ok(plain.remember({ partition: "g", text: "coffee machine is broken", claim: claim("a", "r1") }).ok);
  const off = await plain.search({ partitions: ["g"], text: "coffee", mode: "hybrid" });
  assert.ok(off.ok);
  assert.equal(off.value.vector, "off");
  assert.equal(off.value.hits.length, 1);
  assert.deepEqual(plain.rebuildEmbeddings(), { ok: false, error: { code: "embedding_failed", retryable: false } });
  // Bounds: partitions and limit are capped.
  assert.deepEqual(await plain.search({ partitions: [], text: "x" }), { ok: false, error: { code: "memory_record_invalid", retryable: false } });
  assert.deepEqual(await plain.search({ partitions: ["g"], text: "x", limit: 10_000 }), { ok: false, error: { code: "memory_limit_exceeded", retryable: false } });
});

test("P-MEM-06 the FTS5 query is built from the shared tokenizer's tokens, quoted", () => {
  assert.equal(matchExpression('Deploy "NOW" OR near(x)'), '"deploy" OR "now" OR "or" OR "near" OR "x"');
  assert.equal(matchExpression("?!"), null);
  const db = openSqliteGroupDatabase({ path: ":memory:" });
  assert.deepEqual(lexicalSearch(db, [], "x", 5), []);
  db.close();
});
