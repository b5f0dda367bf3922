// P-MEM-25 on Node: record texts holding a NUL come back whole (the same scenario runs under Deno in
// test/deno/memory_group_nul_texts_test.ts, where node:sqlite cuts a read text at its first NUL).
import assert from "node:assert/strict";
import { test } from "node:test";
import { readsCutAtNul } from "../../../src/memory/group/whole-text.ts";
import { openSqliteGroupDatabase } from "../../../src/memory/group/sqlite-database.ts";
import { groupNulTextsWhole } from "../../support/group-nul-texts.ts";

// This file also runs under `deno test`, whose node:sqlite cuts a read text at its NUL.
const onDeno = typeof process.versions.deno === "string";

test("P-MEM-25 Node's node:sqlite reads a text holding a NUL whole, so the group profile keeps its plain SQL (Deno's cuts it)", () => {
  const db = openSqliteGroupDatabase({ path: ":memory:" });
  try {
    assert.equal(db.get("SELECT 'a' || char(0) || 'b' AS v")?.v, onDeno ? "a" : "a\u0000b");
    assert.equal(readsCutAtNul(db), onDeno);
  } finally {
    db.close();
  }
});

test("P-MEM-25 group record texts holding a NUL come back whole from remember, get, list, search, supersede and the drain, and after a reopen", async (t) => {
  await groupNulTextsWhole(t);
});
