// The Deno lane: Deno 2.9's node:sqlite hands JS a row's text cut at its first NUL, so startup validation reads every
// value holding one as its BLOB, judged whole (nul-text.ts readsCutAtNul, journal-validation.ts nulSafe). Each value
// here, a valid prefix, a NUL and more, must fail startup closed under Deno as it does under Node.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { openSqliteStore } from "../../src/persistence/sqlite-store.ts";
import { NUL_CORRUPTIONS, storeNul } from "../support/nul-corruptions.ts";
import { seedEveryTable } from "../support/seeded-store.ts";

test("P-STO-06 under Deno: this runtime cuts a row's text at its NUL (the reason for the NUL-safe reads)", () => {
  const db = new DatabaseSync(":memory:");
  try {
    assert.equal((db.prepare("SELECT 'a' || char(0) || 'b' AS v").get() as { v: string }).v, "a");
  } finally {
    db.close();
  }
});

for (const [where, sql] of NUL_CORRUPTIONS) {
  test(`P-STO-06 under Deno: a ${where} value cut at a NUL fails startup with storage_record_invalid (${sql.slice(7, 60)})`, () => {
    const dir = mkdtempSync(join(tmpdir(), "aic-deno-nul-"));
    try {
      const path = join(dir, "controller.sqlite");
      seedEveryTable(path);
      storeNul(path, sql);
      const opened = openSqliteStore({ path });
      if (opened.ok) opened.value.close();
      assert.deepEqual(opened.ok ? null : opened.error, { code: "storage_record_invalid", retryable: false, where });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
