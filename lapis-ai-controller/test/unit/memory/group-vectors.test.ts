// The vector index keeps each partition's vectors in one contiguous range of
// slots (vectors.ts), moving rows between ranges on every insert and removal.
// After any mix of inserts, re-inserts, partition changes and removals across
// partitions, each search answers exactly what an index built afresh from the
// same rows answers, on both scoring loops.
import assert from "node:assert/strict";
import { test } from "node:test";
import { quantize } from "../../../src/memory/group/vector-prefilter.ts";
import { normalize, VectorIndex, type VectorHit } from "../../../src/memory/group/vectors.ts";

type Stored = { partition: number; id: string; updatedAt: string; v: Float32Array };

/** The same rows inserted afresh, in row order: the layout a moved row must be equivalent to (a row's score does not depend on its slot). */
function fresh(rows: ReadonlyMap<number, Stored>, dims: number, kernel: "auto" | "js"): VectorIndex {
  const index = new VectorIndex(dims, 1, kernel);
  for (const [rowNo, r] of [...rows.entries()].sort((a, b) => a[0] - b[0])) index.upsert(rowNo, r.partition, r.id, r.updatedAt, r.v);
  return index;
}

test("P-MEM-06 partition ranges: after inserts, updates, partition moves and removals every search is the exact ranking of its partitions", () => {
  const dims = 12;
  let seed = 11;
  const next = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const vector = () => {
    // Coarse values: equal scores are common, so the tie-break (newer, then smaller id) is exercised too.
    const v = Float32Array.from({ length: dims }, () => Math.round((next() - 0.5) * 4));
    if (!normalize(v)) v[0] = 1;
    return v;
  };
  for (const kernel of ["auto", "js"] as const) {
    const index = new VectorIndex(dims, 1, kernel);
    const rows = new Map<number, Stored>();
    for (let step = 0; step < 3_000; step++) {
      const rowNo = Math.floor(next() * 400);
      const op = next();
      if (op < 0.6) {
        const stored = rows.get(rowNo);
        // Mostly a new row or a revision in place; sometimes the same row in another partition.
        const partition = stored !== undefined && op < 0.5 ? stored.partition : Math.floor(next() * 6);
        const r = { partition, id: `id${String(rowNo).padStart(4, "0")}`, updatedAt: `2026-01-0${1 + Math.floor(next() * 3)}`, v: vector() };
        rows.set(rowNo, r);
        index.upsert(rowNo, r.partition, r.id, r.updatedAt, r.v);
      } else {
        rows.delete(rowNo);
        index.remove(rowNo);
      }
      if (step % 50 === 0) {
        assert.equal(index.size, rows.size);
        const asked = new Set([0, 1, 2, 3, 4, 5].filter(() => next() < 0.5));
        const q = vector();
        const hits: VectorHit[] = index.top(q, asked, 15);
        assert.deepEqual(hits, fresh(rows, dims, kernel).top(q, asked, 15), `${kernel} step ${step}`);
        // Every asked partition's vector was scored: the hits are the best of exactly those rows.
        const inAsked = [...rows.values()].filter((r) => asked.has(r.partition));
        assert.equal(hits.length, Math.min(15, inAsked.length));
        for (const h of hits) assert.ok(asked.has(rows.get(h.rowNo)?.partition ?? -1) && rows.get(h.rowNo)?.id === h.id);
      }
    }
  }
});

test("P-GRP-02 the coarse int8 pass scores fewer vectors and answers exactly what scoring every vector answers", () => {
  const dims = 384;
  let seed = 23;
  const next = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const gauss = () => Math.sqrt(-2 * Math.log(next() + 1e-12)) * Math.cos(2 * Math.PI * next());
  const unit = (v: Float32Array) => {
    assert.ok(normalize(v));
    return v;
  };
  // Clustered dense vectors (like a sentence model's), exact duplicates (ties at every score) and near-duplicates.
  const centers = Array.from({ length: 12 }, () => unit(Float32Array.from({ length: dims }, gauss)));
  const near = (c: Float32Array, spread: number) => unit(Float32Array.from(c, (x) => x + spread * gauss()));
  const auto = new VectorIndex(dims, 1, "auto");
  const exact = new VectorIndex(dims, 1, "exact");
  const js = new VectorIndex(dims, 1, "js");
  assert.equal(exact.simd, true);
  const kept = new Map<number, Float32Array>();
  for (let i = 0; i < 7_000; i++) {
    const c = centers[i % centers.length] as Float32Array;
    const v = i % 50 === 0 && i > 0 ? (kept.get(i - 50) as Float32Array) : near(c, i % 7 === 0 ? 0.001 : 0.08);
    kept.set(i, v);
    const partition = i % 5 === 4 ? 2 : 1;
    const updatedAt = `2026-01-0${1 + (i % 3)}`;
    for (const index of [auto, exact, js]) index.upsert(i, partition, `id${String(i).padStart(5, "0")}`, updatedAt, v);
  }
  // Removals and partition moves shuffle slots (and their codes) between ranges.
  for (let i = 0; i < 7_000; i += 13) for (const index of [auto, exact, js]) index.remove(i);
  for (let i = 5; i < 7_000; i += 97) for (const index of [auto, exact, js]) index.upsert(i, 3, `id${String(i).padStart(5, "0")}`, "2026-01-09", kept.get(i) as Float32Array);
  let pruned = 0;
  for (let round = 0; round < 24; round++) {
    const q = round % 3 === 0 ? unit(Float32Array.from({ length: dims }, gauss)) : near(centers[round % centers.length] as Float32Array, round % 2 === 0 ? 0.001 : 0.05);
    for (const [partitions, depth] of [[new Set([1]), 10], [new Set([1, 2]), 100], [new Set([1, 2, 3]), 25], [new Set([2]), 1]] as const) {
      const a = auto.top(q, partitions, depth);
      const b = exact.top(q, partitions, depth);
      assert.deepEqual(a, b, `round ${round} depth ${depth}`);
      assert.equal(exact.scored > auto.scored || auto.scored === exact.scored, true);
      if (auto.scored < exact.scored) pruned += 1;
      // The JavaScript loop (float64 sums) picks the same rows up to score ties within its rounding.
      const c = js.top(q, partitions, depth);
      a.forEach((h, i) => assert.ok(Math.abs(h.score - (c[i] as VectorHit).score) < 1e-5));
    }
  }
  assert.ok(pruned >= 60, `the coarse pass pruned in ${pruned} of 96 searches`);
});

test("P-GRP-02 the coarse pass keeps every vector that can reach the cut where scores are packed far closer than its rounding", () => {
  // 16 dims, 6000 uniform vectors: neighbouring scores differ by ~1e-4, the int8 rounding moves a score by up to ~1e-2.
  const dims = 16;
  let seed = 5;
  const next = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const random = () => {
    const v = Float32Array.from({ length: dims }, () => next() * 2 - 1);
    assert.ok(normalize(v));
    return v;
  };
  const auto = new VectorIndex(dims, 1, "auto");
  const exact = new VectorIndex(dims, 1, "exact");
  for (let i = 0; i < 6_000; i++) {
    const v = random();
    for (const index of [auto, exact]) index.upsert(i, 1, `id${String(i).padStart(5, "0")}`, "2026-01-01", v);
  }
  for (let round = 0; round < 40; round++) {
    const q = random();
    for (const depth of [1, 10, 100]) {
      assert.deepEqual(auto.top(q, new Set([1]), depth), exact.top(q, new Set([1]), depth), `round ${round} depth ${depth}`);
      assert.ok(auto.scored < exact.scored);
    }
  }
});

test("P-GRP-02 int8 codes: each code within -127..127, the scale from the largest value, the error and length exact", () => {
  let seed = 9;
  const next = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  for (const dims of [1, 7, 16, 384]) {
    for (let round = 0; round < 20; round++) {
      const v = Float32Array.from({ length: dims }, () => (round % 4 === 0 ? Math.round(next() * 8) / 8 : next() * 2 - 1));
      const codes = new Int8Array(dims + 3);
      const q = quantize(v, codes, 3);
      const max = Math.max(...Array.from(v, Math.abs));
      assert.equal(q.scale, max / 127);
      let error = 0;
      let norm = 0;
      for (let i = 0; i < dims; i++) {
        const c = codes[3 + i] as number;
        assert.ok(c >= -127 && c <= 127);
        const x = v[i] as number;
        assert.ok(Math.abs(x - q.scale * c) <= q.scale / 2 + 1e-12, "each code is the nearest step");
        error += (x - q.scale * c) ** 2;
        norm += x * x;
      }
      assert.ok(Math.abs(q.error - Math.sqrt(error)) <= 1e-12 && Math.abs(q.norm - Math.sqrt(norm)) <= 1e-12);
    }
  }
  const zero = quantize(new Float32Array(4), new Int16Array(4), 0);
  assert.deepEqual(zero, { scale: 0, error: 0, norm: 0 });
});
