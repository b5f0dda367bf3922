// Startup validation reads a table's rows as arrays in pages of PAGE_ROWS with all() (table-pages.ts everyRow): every row
// exactly once, in rowid order, whatever the rowids (sparse, negative, at a page's edge), the visitor's false stopping the
// read; rowids beyond a safe integer, or a column named rowid, are read without pages.
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { everyRow, PAGE_ROWS } from "../../../src/persistence/table-pages.ts";

function table(rowids: readonly (number | bigint)[], columns = "v TEXT NOT NULL"): DatabaseSync {
  const db = new DatabaseSync(":memory:");
  db.exec(`CREATE TABLE t (${columns}) STRICT`);
  const insert = db.prepare(`INSERT INTO t (_rowid_, ${columns.split(" ")[0]}) VALUES (?, ?)`);
  db.exec("BEGIN");
  for (const r of rowids) insert.run(r, `v${r}`);
  db.exec("COMMIT");
  return db;
}

/** The first values of the rows everyRow visits, and whether it answered true. */
function visited(db: DatabaseSync, paged = true, stopAt?: string): { values: unknown[]; all: boolean } {
  const n = Number((db.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n);
  const values: unknown[] = [];
  const all = everyRow(db, "t", "*", n, paged, (row) => { values.push(row[0]); return row[0] !== stopAt; });
  return { values, all };
}

const range = (from: number, count: number, step = 1) => Array.from({ length: count }, (_, i) => from + i * step);

const SHAPES: ReadonlyArray<readonly [string, readonly number[]]> = [
  ["one row", [1]],
  ["a full page", range(1, PAGE_ROWS)],
  ["a page and one row", range(1, PAGE_ROWS + 1)],
  ["two full pages", range(1, 2 * PAGE_ROWS)],
  ["three pages, sparse rowids", range(5, 2 * PAGE_ROWS + 7, 1_000_003)],
  ["negative and positive rowids", range(-PAGE_ROWS - 3, 2 * PAGE_ROWS + 5)],
  ["rowids at the edges of the safe range", [-(2 ** 53 - 1), ...range(1, PAGE_ROWS), 2 ** 53 - 2]],
];

for (const [name, rowids] of SHAPES) {
  test(`P-STO-43 startup's paged read visits every row once in rowid order: ${name}`, () => {
    const db = table(rowids);
    try {
      const expected = [...rowids].sort((a, b) => a - b).map((r) => `v${r}`);
      assert.deepEqual(visited(db), { values: expected, all: true });
      assert.deepEqual(visited(db, false), { values: expected, all: true }, "unpaged: the same rows");
    } finally {
      db.close();
    }
  });
}

test("P-STO-43 startup's paged read stops at the visitor's false, in a later page", () => {
  const db = table(range(1, 2 * PAGE_ROWS + 1));
  try {
    const stop = `v${PAGE_ROWS + 1}`;
    assert.deepEqual(visited(db, true, stop), { values: range(1, PAGE_ROWS + 1).map((r) => `v${r}`), all: false });
  } finally {
    db.close();
  }
});

test("P-STO-43 rowids beyond a safe integer are read without pages (node:sqlite cannot read them into a number), every row still visited", () => {
  const db = table([...range(1, PAGE_ROWS + 1).map(BigInt), 2n ** 62n]);
  try {
    const result = visited(db);
    assert.equal(result.all, true);
    assert.equal(result.values.length, PAGE_ROWS + 2);
    assert.equal(result.values.at(-1), `v${2n ** 62n}`);
  } finally {
    db.close();
  }
});

test("P-STO-43 a table with a column named rowid is read without pages when the caller says so, every row visited", () => {
  const db = table(range(1, PAGE_ROWS + 2), "rowid TEXT NOT NULL");
  try {
    const n = PAGE_ROWS + 2;
    const values: unknown[] = [];
    assert.equal(everyRow(db, "t", "*", n, false, (row) => { values.push(row[0]); return true; }), true);
    assert.equal(values.length, n);
  } finally {
    db.close();
  }
});
