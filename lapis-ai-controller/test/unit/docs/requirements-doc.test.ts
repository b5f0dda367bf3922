// docs/requirements.md is the in-repository list of requirement ids (P-LAY-01):
// every id a test is named after must have its row there, with a check and a
// status, so a test name always resolves from a clone.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

const PACKAGE = join(import.meta.dirname, "..", "..", "..");
const ID = /\b(P-[A-Z]{3}|AIC-[A-Z]{3,4})-(\d{2,3}[a-z]?)((?:\/\d{2,3}[a-z]?)*)/g;
const TEST_CALL = /\b(?:test|it|t\.test)\(\s*["'`]([^"'`]*)/g;

/** Every requirement id named in a test title under test/ ("P-CLI-11/13/14" names three). */
function testIds(): Map<string, string> {
  const ids = new Map<string, string>();
  const files = readdirSync(join(PACKAGE, "test"), { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
  for (const file of files) {
    const text = readFileSync(join(PACKAGE, "test", file), "utf8");
    for (const call of text.matchAll(TEST_CALL)) {
      for (const m of (call[1] as string).matchAll(ID)) {
        for (const n of [m[2] as string, ...(m[3] as string).split("/").filter((x) => x !== "")]) ids.set(`${m[1]}-${n}`, file);
      }
    }
  }
  return ids;
}

test("P-LAY-01 every requirement id a test is named after has a row in docs/requirements.md with a check and a status", () => {
  const doc = readFileSync(join(PACKAGE, "docs", "requirements.md"), "utf8");
  const rows = new Map<string, string[]>();
  for (const line of doc.split("\n")) {
    const cells = line.split(/(?<!\\)\|/).map((c) => c.trim());
    if (cells.length >= 5 && /^(P-|AIC-)/.test(cells[1] as string)) rows.set(cells[1] as string, cells.slice(2, 4));
  }
  assert.ok(rows.size >= 200, `rows: ${rows.size}`);
  const ids = testIds();
  assert.ok(ids.size > 100, `ids in test names: ${ids.size}`);
  for (const [id, file] of ids) {
    // Group ids ("AIC-ARCH-001") name the family whose lettered rows are listed.
    const row = rows.get(id) ?? [...rows.entries()].find(([k]) => k.startsWith(id) && /[a-z]$/.test(k))?.[1];
    assert.ok(row !== undefined, `${id} (named in test/${file}) has no row`);
  }
  for (const [id, [check, status]] of rows) {
    assert.ok((check ?? "").length > 10, `${id} has a check`);
    assert.match(status ?? "", /^(tested: |deferred: |note: )/, `${id} has a status`);
  }
});
