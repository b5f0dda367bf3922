// P-MEM-25 under Deno: this runtime's node:sqlite stores a bound text whole but hands JS a read one cut at its first
// NUL; the group profile reads a record text holding a NUL as its BLOB and decodes it (memory/group/whole-text.ts).
// The same scenario runs under Node in test/unit/memory/group-nul-texts.test.ts.
import assert from "node:assert/strict";
import { test } from "node:test";
import { openSqliteGroupDatabase } from "../../src/memory/group/sqlite-database.ts";
import { readsCutAtNul } from "../../src/memory/group/whole-text.ts";
import { groupNulTextsWhole } from "../support/group-nul-texts.ts";

test("P-MEM-25 under Deno: the group port's read of a text holding a NUL is cut (the reason for the whole-text reads)", () => {
  const db = openSqliteGroupDatabase({ path: ":memory:" });
  try {
    assert.equal(db.get("SELECT 'a' || char(0) || 'b' AS v")?.v, "a");
    assert.equal(readsCutAtNul(db), true);
  } finally {
    db.close();
  }
});

test("P-MEM-25 under Deno: group record texts holding a NUL come back whole from remember, get, list, search, supersede and the drain, and after a reopen", async (t) => {
  await groupNulTextsWhole(t);
});
