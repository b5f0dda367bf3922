// The ranking policy the vault and group profiles share (P-MEM-06): the
// tokenizer, BM25 lexical scoring over exactly the documents passed in, and
// reciprocal rank fusion with recency then id as the deterministic tie-break.
import assert from "node:assert/strict";
import { test } from "node:test";
import { compareRecency, fuseRrf, rankLexical, RRF_K, termStats, tokenize } from "../../../src/memory/ranking.ts";

const doc = (id: string, text: string, updatedAt = "2026-01-01T00:00:00.000Z") => ({ id, text, updatedAt });

test("P-MEM-06 tokenize: NFKC, lower case, letters and digits of any script, punctuation dropped", () => {
  assert.deepEqual(tokenize("Hello, World! It's 2026."), ["hello", "world", "it", "s", "2026"]);
  assert.deepEqual(tokenize("Ｆｕｌｌｗｉｄｔｈ Café naïve"), ["fullwidth", "café", "naïve"]);
  assert.deepEqual(tokenize("Grüße aus Köln — Привет мир"), ["grüße", "aus", "köln", "привет", "мир"]);
  assert.deepEqual(tokenize("  ...  "), []);
});

test("P-MEM-06 rankLexical: documents sharing a query term, rarer and denser terms first; others left out", () => {
  const docs = [
    doc("a", "the cat sat on the mat"),
    doc("b", "the dog chased the cat around the cat tree"),
    doc("c", "a quiet afternoon"),
    doc("d", "the zebra"),
  ];
  const ranked = rankLexical("cat zebra", docs);
  assert.deepEqual(ranked.map((r) => r.item.id), ["d", "b", "a"]);
  assert.ok(ranked.every((r) => r.score > 0));
  assert.deepEqual(rankLexical("cat", docs, { limit: 1 }).map((r) => r.item.id), ["b"]);
  assert.deepEqual(rankLexical("", docs), []);
  assert.deepEqual(rankLexical("cat", []), []);
});

test("P-MEM-06 rankLexical scores only the corpus it is given (filter first: another partition cannot shift scores)", () => {
  const mine = [doc("m1", "deploy the release on friday"), doc("m2", "release notes draft")];
  const other = [doc("o1", "release release release"), doc("o2", "release plan")];
  const alone = rankLexical("release friday", mine);
  const again = rankLexical("release friday", mine.slice());
  assert.deepEqual(alone, again);
  const mixed = rankLexical("release friday", [...mine, ...other]).filter((r) => r.item.id.startsWith("m"));
  assert.notDeepEqual(alone.map((r) => r.score), mixed.map((r) => r.score), "scores depend on the corpus, which is why callers filter before scoring");
});

test("P-MEM-06 equal scores break by recency, then by id, whatever the input order", () => {
  const docs = [
    doc("b", "same words here", "2026-01-01T00:00:00.000Z"),
    doc("a", "same words here", "2026-01-01T00:00:00.000Z"),
    doc("c", "same words here", "2026-03-01T00:00:00.000Z"),
  ];
  for (const order of [docs, [...docs].reverse(), [docs[1]!, docs[2]!, docs[0]!]]) {
    assert.deepEqual(rankLexical("words", order).map((r) => r.item.id), ["c", "a", "b"]);
  }
  assert.ok(compareRecency(doc("x", "", "not a date"), doc("y", "", "2020-01-01T00:00:00Z")) > 0, "an unparsable time sorts last");
});

test("P-MEM-06 fuseRrf: sum of 1/(k+rank) over the lists, k=60 by default", () => {
  const a = doc("a", "");
  const b = doc("b", "");
  const c = doc("c", "");
  const fused = fuseRrf([[a, b], [b, c]]);
  assert.equal(RRF_K, 60);
  assert.deepEqual(fused.map((f) => f.item.id), ["b", "a", "c"]);
  assert.equal(fused[0]!.score, 1 / 62 + 1 / 61);
  assert.equal(fused[1]!.score, 1 / 61);
  assert.equal(fused[2]!.score, 1 / 62);
  assert.deepEqual(fuseRrf([[a, b]], 0).map((f) => f.score), [1, 1 / 2]);
  assert.deepEqual(fuseRrf([]), []);
  assert.throws(() => fuseRrf([[a]], -1), RangeError);
  assert.throws(() => fuseRrf([[a]], Number.NaN), RangeError);
});

test("P-MEM-06 fuseRrf is deterministic: list order does not matter, ties break by recency then id, duplicates count once", () => {
  const old = doc("z", "", "2025-01-01T00:00:00.000Z");
  const recent = doc("y", "", "2026-06-01T00:00:00.000Z");
  const same = doc("x", "", "2025-01-01T00:00:00.000Z");
  // Every item holds rank 1 in one list and rank 2 in another: equal scores.
  const lists = [[old, recent], [recent, same], [same, old]];
  const expected = ["y", "x", "z"];
  assert.deepEqual(fuseRrf(lists).map((f) => f.item.id), expected);
  assert.deepEqual(fuseRrf([...lists].reverse()).map((f) => f.item.id), expected);
  const scores = fuseRrf(lists).map((f) => f.score);
  assert.ok(scores.every((s) => s === scores[0]), "equal rank sets give exactly equal scores");
  assert.deepEqual(fuseRrf([[old, old, recent]]).map((f) => [f.item.id, f.score]), [["z", 1 / 61], ["y", 1 / 63]]);
});

test("P-MEM-06 cached term stats rank exactly as the text does", () => {
  const docs = [doc("a", "the cat sat on the mat"), doc("b", "the dog chased the cat around the cat tree"), doc("c", "zebra crossing")];
  const cached = docs.map((d) => ({ ...d, stats: termStats(d.text) }));
  assert.deepEqual(rankLexical("cat zebra", cached).map((r) => [r.item.id, r.score]), rankLexical("cat zebra", docs).map((r) => [r.item.id, r.score]));
  assert.deepEqual(termStats("The cat, the CAT."), { counts: new Map([["the", 2], ["cat", 2]]), length: 4 });
});
