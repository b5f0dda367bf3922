// docs/requirements.md is the in-repository list of requirement ids (P-LAY-01):
// every id a test is named after must have its row there, with a check and a
// status, so a test name always resolves from a clone; and every test file a
// row names must carry that row's id in a test title, so a row never claims a
// file that proves something else.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { test } from "node:test";

const PACKAGE = join(import.meta.dirname, "..", "..", "..");
const ID = /\b(P-[A-Z]{3}|AIC-[A-Z]{3,4})-(\d{2,3}[a-z]?)((?:\/\d{2,3}[a-z]?)*)/g;
const TEST_CALL = /\b(?:test|it|t\.test)\(\s*["'`]([^"'`]*)/g;
/** A test file a status cell names: `test/….test.ts` or a Deno lane `test/deno/…_test.ts`. */
const TEST_FILE = /`(test\/[^`\s]+?(?:\.test|_test)\.ts)`/g;
const SUPPORT_IMPORT = /from\s+["']((?:\.\.?\/)+(?:[^"']*\/)?support\/[^"']+\.ts)["']/g;

/** The ids named in the test titles of one file (package-relative path). */
function titleIds(file: string): Set<string> {
  const ids = new Set<string>();
  for (const call of readFileSync(join(PACKAGE, file), "utf8").matchAll(TEST_CALL)) {
    for (const m of (call[1] as string).matchAll(ID)) {
      for (const n of [m[2] as string, ...(m[3] as string).split("/").filter((x) => x !== "")]) ids.add(`${m[1]}-${n}`);
    }
  }
  return ids;
}

/** The ids a test file carries: its own titles and those of the test/support suites it imports and runs. */
function carriedIds(file: string): Set<string> {
  const ids = titleIds(file);
  for (const m of readFileSync(join(PACKAGE, file), "utf8").matchAll(SUPPORT_IMPORT)) {
    const support = relative(PACKAGE, join(PACKAGE, dirname(file), m[1] as string));
    if (existsSync(join(PACKAGE, support))) for (const id of titleIds(support)) ids.add(id);
  }
  return ids;
}

/** Every test file under test/, package-relative. */
function testFiles(): string[] {
  return readdirSync(join(PACKAGE, "test"), { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts")).map((f) => join("test", f));
}

/** Every requirement id named in a test title under test/ ("P-CLI-11/13/14" names three), with one file naming it. */
function testIds(): Map<string, string> {
  const ids = new Map<string, string>();
  for (const file of testFiles()) for (const id of titleIds(file)) ids.set(id, file);
  return ids;
}

/** The rows of docs/requirements.md: id -> [check, status]. */
function rows(): Map<string, string[]> {
  const doc = readFileSync(join(PACKAGE, "docs", "requirements.md"), "utf8");
  const out = new Map<string, string[]>();
  for (const line of doc.split("\n")) {
    const cells = line.split(/(?<!\\)\|/).map((c) => c.trim());
    if (cells.length >= 5 && /^(P-|AIC-)/.test(cells[1] as string)) out.set(cells[1] as string, cells.slice(2, 4));
  }
  return out;
}

test("P-LAY-01 every requirement id a test is named after has a row in docs/requirements.md with a check and a status", () => {
  const table = rows();
  assert.ok(table.size >= 200, `rows: ${table.size}`);
  const ids = testIds();
  assert.ok(ids.size > 100, `ids in test names: ${ids.size}`);
  for (const [id, file] of ids) {
    // Group ids ("AIC-ARCH-001") name the family whose lettered rows are listed.
    const row = table.get(id) ?? [...table.entries()].find(([k]) => k.startsWith(id) && /[a-z]$/.test(k))?.[1];
    assert.ok(row !== undefined, `${id} (named in ${file}) has no row`);
  }
  for (const [id, [check, status]] of table) {
    assert.ok((check ?? "").length > 10, `${id} has a check`);
    assert.match(status ?? "", /^(tested: |deferred: |note: )/, `${id} has a status`);
  }
});

test("P-LAY-01 every test file a row names exists and carries the row's id in a test title", () => {
  const problems: string[] = [];
  let named = 0;
  for (const [id, [, status]] of rows()) {
    // A lettered row ("AIC-ARCH-001d") is also carried by its group id ("AIC-ARCH-001").
    const group = id.replace(/(\d)[a-z]$/, "$1");
    for (const m of (status ?? "").matchAll(TEST_FILE)) {
      const file = m[1] as string;
      named++;
      if (!existsSync(join(PACKAGE, file))) problems.push(`${id}: ${file} does not exist`);
      else if (!carriedIds(file).has(id) && !carriedIds(file).has(group)) problems.push(`${id}: no test title in ${file} names it`);
    }
  }
  assert.ok(named > 300, `test files named by rows: ${named}`);
  assert.deepEqual(problems, []);
});

test("P-LAY-01 the check catches a row whose file does not carry its id, and a file that does not exist", () => {
  // The rule above, on known files: this file carries P-LAY-01 and not P-STO-01.
  const own = relative(PACKAGE, import.meta.filename);
  assert.ok(carriedIds(own).has("P-LAY-01"));
  assert.ok(!carriedIds(own).has("P-STO-01"));
  // A support suite's titles count for the file that imports and runs it (the record-store contract).
  assert.ok(carriedIds("test/unit/memory/record-stores.test.ts").has("P-MEM-01"));
  assert.ok(!titleIds("test/unit/memory/record-stores.test.ts").has("P-MEM-01"));
  const cell = "tested: `test/unit/docs/requirements-doc.test.ts`, `test/deno/store_test.ts` (note), `.ci/run`";
  assert.deepEqual([...cell.matchAll(TEST_FILE)].map((m) => m[1]), ["test/unit/docs/requirements-doc.test.ts", "test/deno/store_test.ts"]);
});

test("P-LAY-01 no test title, requirement id, README or docs page names an issue-tracker number", () => {
  const found: string[] = [];
  for (const file of testFiles()) {
    for (const call of readFileSync(join(PACKAGE, file), "utf8").matchAll(TEST_CALL)) {
      if (/\bISSUE-\d|\bissue \d/i.test(call[1] as string)) found.push(`${file}: ${(call[1] as string).slice(0, 60)}`);
    }
  }
  const doc = readFileSync(join(PACKAGE, "docs", "requirements.md"), "utf8");
  for (const m of doc.matchAll(/^\| (ISSUE-[^ |]+)/gm)) found.push(`docs/requirements.md: ${m[1]}`);
  // The README and every page under docs/ speak to a reader of the clone: no tracker numbers.
  const pages = ["README.md", ...readdirSync(join(PACKAGE, "docs"), { recursive: true, encoding: "utf8" }).map((f) => join("docs", f))]
    .filter((f) => /\.(md|json|mjs)$/.test(f));
  for (const page of pages) {
    for (const m of readFileSync(join(PACKAGE, page), "utf8").matchAll(/\b[Ii]ssue \d+|ISSUE-\d+|(?<![\w&])#\d+\b/g)) found.push(`${page}: ${m[0]}`);
  }
  assert.deepEqual(found, []);
});
