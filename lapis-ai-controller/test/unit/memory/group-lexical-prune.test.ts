// The pruned lexical path (lexical-bound.ts): bm25() runs only on the rows
// holding a rare query term when the best of them provably outrank every
// other row. Proven here against the full path on a corpus made to stress
// it (a skewed vocabulary, words repeated in one record, short and long
// records, tie groups longer than the rows fetched past the cut, several
// partitions, forgotten and superseded records), against SQLite's own
// bm25() for the bound's inputs, and through the real search facade.
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import { inList, type GroupDatabase } from "../../../src/memory/group/database-port.ts";
import { documentCount, idfBound, indexRowsBound, prunePlan } from "../../../src/memory/group/lexical-bound.ts";
import { lexicalSearch, queryTerms } from "../../../src/memory/group/lexical.ts";
import { openGroupMemory, type GroupMemory } from "../../../src/memory/group/profile.ts";
import { openSqliteGroupDatabase } from "../../../src/memory/group/sqlite-database.ts";
import { createPrng } from "../../support/chaos-prng.ts";
import { claim, realRedactor } from "../../support/group-memory.ts";

const FULL = { from: Number.POSITIVE_INFINITY };
const ALWAYS = { from: 0 };

type Opened = { m: GroupMemory; db: GroupDatabase; sql: string[] };

/** A group memory over a database port that records each statement it runs. */
function open(t: TestContext, now: () => Date): Opened {
  const raw = openSqliteGroupDatabase({ path: ":memory:" });
  const sql: string[] = [];
  const db: GroupDatabase = {
    exec: (s) => raw.exec(s),
    run: (s, p) => raw.run(s, p),
    get: (s, p) => (sql.push(s), raw.get(s, p)),
    all: (s, p) => (sql.push(s), raw.all(s, p)),
    close: () => raw.close(),
  };
  const opened = openGroupMemory({ db, capture: realRedactor(t), now });
  assert.ok(opened.ok);
  t.after(() => opened.value.close());
  return { m: opened.value, db, sql };
}

function remember(m: GroupMemory, partition: string, text: string) {
  const r = m.remember({ partition, text, claim: claim("alice", text) });
  assert.ok(r.ok, `remember ${text}: ${r.ok ? "" : r.error.code}`);
  return r.value;
}

const partitionNo = (db: GroupDatabase, id: string) => Number(db.get("SELECT no FROM group_partitions WHERE id = ?", [id])?.no);

/** A corpus where a few words are in most records, most words in few. */
function seedCorpus(t: TestContext): Opened & { words: (n: number) => string } {
  let clock = Date.parse("2026-04-01T00:00:00.000Z");
  let tick = 0;
  // Every third record shares its time with the one before: the id decides those ties.
  const o = open(t, () => new Date(tick++ % 3 === 0 ? (clock += 1_000) : clock));
  const random = createPrng(41);
  const word = () => `w${Math.floor(Math.pow(400, random())).toString(36)}`;
  const words = (n: number) => Array.from({ length: n }, word).join(" ");
  for (let i = 0; i < 1_500; i++) {
    const partition = i % 10 === 9 ? "noise" : i % 10 === 8 ? "side" : "main";
    remember(o.m, partition, `${words(1 + Math.floor(random() * 30))} n${i}`);
  }
  // Long records repeating a common word; very short ones.
  for (let i = 0; i < 5; i++) remember(o.m, "main", `${"w1 ".repeat(40 + i * 30)}w2 long${i}`);
  for (let i = 0; i < 30; i++) remember(o.m, "main", i % 2 === 0 ? `w1 s${i}` : `w2 s${i}`);
  // A tie group of 70 equal scores (same terms, same length) holding a rarer word.
  for (let i = 0; i < 70; i++) remember(o.m, "main", `zeta w1 fa${i} fb${i}`);
  // Some records leave the searchable set.
  const listed = o.m.list("main", { limit: 400 });
  assert.ok(listed.ok);
  for (const [i, r] of listed.value.entries()) {
    if (i % 17 === 0) assert.ok(o.m.forget("main", r.id, r.revision).ok);
    else if (i % 29 === 0) assert.ok(o.m.supersede("main", r.id, r.revision, { text: `${r.text} revised`, claim: claim("bob", r.id) }).ok);
  }
  return { ...o, words };
}

test("P-GRP-01 the pruned lexical path answers exactly what the full path answers: rows, scores and order", (t) => {
  const { db, sql, words } = seedCorpus(t);
  const nos = [partitionNo(db, "main")];
  const both = [partitionNo(db, "main"), partitionNo(db, "side")];
  const random = createPrng(7);
  const queries = ["zeta w1", "zeta w1 w2", "w1 w2 w3", "w1", "w1 w2 long3", "w4 w1 w1 s4"];
  for (let i = 0; i < 80; i++) queries.push(words(1 + Math.floor(random() * 4)));
  let pruned = 0;
  let fellBack = 0;
  let tiedPruned = 0;
  for (const query of queries) {
    for (const depth of [1, 3, 10, 50]) {
      for (const partitions of [nos, both]) {
        const full = lexicalSearch(db, partitions, query, depth, FULL);
        sql.length = 0;
        const fast = lexicalSearch(db, partitions, query, depth, ALWAYS);
        assert.deepEqual(fast, full, `query "${query}" at depth ${depth}`);
        const essential = sql.filter((s) => s.includes("+rowid IN") || s.includes("+group_records_fts.rowid IN")).length;
        const plain = sql.filter((s) => s.includes("bm25") && !s.includes("+rowid IN") && !s.includes("+group_records_fts.rowid IN")).length;
        if (essential > 0 && plain === 0) pruned += 1;
        if (essential > 0 && plain > 0) fellBack += 1;
        if (sql.some((s) => s.includes("+group_records_fts.rowid IN"))) tiedPruned += 1;
      }
    }
  }
  // Every path ran: pruned answers, a failed check that fell back, and a tie group ordered inside SQLite.
  assert.ok(pruned > 200, `pruned ${pruned}`);
  assert.ok(fellBack > 0, `fell back ${fellBack}`);
  assert.ok(tiedPruned > 0, `tied ${tiedPruned}`);
});

test("P-GRP-01 a row holding no essential term scores below the plan's bound, for every row of every plan", (t) => {
  const { db, words } = seedCorpus(t);
  const nos = [partitionNo(db, "main"), partitionNo(db, "side"), partitionNo(db, "noise")];
  const random = createPrng(11);
  let plans = 0;
  let closest = 0;
  for (let i = 0; i < 80; i++) {
    const terms = queryTerms(i === 0 ? "w1 w2 zeta" : words(2 + Math.floor(random() * 3)));
    const plan = prunePlan(db, terms, 1, ALWAYS);
    if (plan === null) continue;
    plans += 1;
    const match = `fts_scope : (${nos.map((n) => `p${n}`).join(" OR ")}) AND fts_body : (${terms.map((x) => `"${x}"`).join(" OR ")})`;
    const others = db.all(`SELECT rowid AS no, bm25(group_records_fts, 1.0, 0.0) AS score FROM group_records_fts WHERE group_records_fts MATCH ?
      AND +rowid NOT IN (SELECT rowid FROM group_records_fts WHERE group_records_fts MATCH ?)`, [match, plan.essential]);
    for (const row of others) {
      assert.ok(-Number(row.score) < plan.bound, `row ${String(row.no)} scores ${-Number(row.score)} >= ${plan.bound} for ${terms.join(" ")}`);
      closest = Math.max(closest, -Number(row.score) / plan.bound);
    }
  }
  assert.ok(plans > 40, `plans ${plans}`);
  // The long records (a common word 40 to 160 times) come close to the bound: it is tight, not loose by design.
  assert.ok(closest > 0.5, `closest ${closest}`);
});

test("P-GRP-01 the bound's inputs are bm25()'s own: the row count and each term's document count", (t) => {
  const { m, db } = open(t, () => new Date("2026-04-01T00:00:00.000Z"));
  const texts = ["apple banana", "apple", "cherry date elderberry fig", "apple apple apple grape", "kiwi"];
  const records = texts.map((text) => remember(m, "g", text));
  const gone = records[4] as (typeof records)[number];
  assert.ok(m.forget("g", gone.id, gone.revision).ok);
  // The forgotten record keeps its (empty) index row: five rows, one of them without tokens.
  assert.equal(indexRowsBound(db), 5);
  assert.equal(documentCount(db, "apple"), 3);
  assert.equal(documentCount(db, "kiwi"), 0);
  const no = partitionNo(db, "g");
  const rows = db.all("SELECT rowid AS no, bm25(group_records_fts, 1.0, 0.0) AS score FROM group_records_fts WHERE group_records_fts MATCH ? ORDER BY rowid", [`fts_scope : (p${no}) AND fts_body : ("apple")`]);
  // Each row's length counts its partition token too; the average is over all five index rows.
  const lengths = [3, 2, 5];
  const freqs = [1, 1, 3];
  const avgdl = (3 + 2 + 5 + 5 + 0) / 5;
  const idf = Math.log((5 - 3 + 0.5) / (3 + 0.5)) <= 0 ? 1e-6 : Math.log((5 - 3 + 0.5) / (3 + 0.5));
  assert.equal(idf, 1e-6, "a term in most rows gets bm25()'s idf floor");
  assert.equal(idfBound(5, 3), 1e-6);
  rows.forEach((row, i) => {
    const f = freqs[i] as number;
    const expected = idf * ((f * 2.2) / (f + 1.2 * (1 - 0.75 + (0.75 * (lengths[i] as number)) / avgdl)));
    assert.ok(Math.abs(-Number(row.score) - expected) <= expected * 1e-12, `row ${i}: ${-Number(row.score)} vs ${expected}`);
  });
  // A rarer term: the bound is bm25()'s idf, a hair above.
  const single = db.get("SELECT bm25(group_records_fts, 1.0, 0.0) AS score FROM group_records_fts WHERE group_records_fts MATCH ?", [`fts_scope : (p${no}) AND fts_body : ("grape")`]);
  const grape = idfBound(indexRowsBound(db) as number, documentCount(db, "grape"));
  const exact = Math.log((5 - 1 + 0.5) / 1.5) * ((3 * 0 + 1 * 2.2) / (1 + 1.2 * (0.25 + (0.75 * 5) / avgdl)));
  assert.ok(Math.abs(-Number(single?.score) - exact) <= exact * 1e-12);
  assert.ok(grape >= Math.log(4.5 / 1.5) && grape <= Math.log(4.5 / 1.5) * (1 + 1e-8));
  // The row count grows past one byte of its varint and stays exact.
  for (let i = 0; i < 200; i++) remember(m, "g", `filler ${i}`);
  assert.equal(indexRowsBound(db), 205);
});

test("P-GRP-01 the search facade answers alike with pruning on a skewed corpus, lexical and hybrid", async (t) => {
  const { m, db, sql } = seedCorpus(t);
  sql.length = 0;
  const r = await m.search({ partitions: ["main"], text: "zeta w1 w2", limit: 3 });
  assert.ok(r.ok);
  assert.ok(sql.some((s) => s.includes("+rowid IN")), "the facade takes the pruned path");
  const full = lexicalSearch(db, [partitionNo(db, "main")], "zeta w1 w2", 3, FULL);
  assert.deepEqual(r.value.hits.map((h) => [h.record.id, h.score]), full.map((h) => [h.id, h.score]));
});

test("P-GRP-01 IN lists are padded to a power of two with NULLs, so a few statement texts serve every length", () => {
  assert.deepEqual(inList([1, 2]), { marks: "?, ?, ?, ?, ?, ?, ?, ?", params: [1, 2, null, null, null, null, null, null] });
  assert.equal(inList(Array.from({ length: 9 }, (_, i) => i)).params.length, 16);
  assert.equal(inList(Array.from({ length: 512 }, (_, i) => i)).params.length, 512);
  const db = openSqliteGroupDatabase({ path: ":memory:" });
  const list = inList([2, 3]);
  assert.deepEqual(db.all(`SELECT value FROM (SELECT 1 AS value UNION ALL SELECT 2 UNION ALL SELECT 3) WHERE value IN (${list.marks}) ORDER BY value`, list.params).map((r) => r.value), [2, 3]);
  db.close();
});
