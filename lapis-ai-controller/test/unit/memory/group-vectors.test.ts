// The vector index keeps each partition's vectors in one contiguous range of
// slots (vectors.ts), moving rows between ranges on every insert and removal.
// After any mix of inserts, re-inserts, partition changes and removals across
// partitions, each search answers exactly what an index built afresh from the
// same rows answers, on both scoring loops.
import assert from "node:assert/strict";
import { test } from "node:test";
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
