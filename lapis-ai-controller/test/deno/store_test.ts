// The Deno lane: the same store code opens, writes and validates a database under Deno.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { openSqliteStore } from "../../src/persistence/sqlite-store.ts";

test("P-STO-01 under Deno: the store opens in WAL mode with synchronous=FULL", () => {
  const dir = mkdtempSync(join(tmpdir(), "aic-deno-"));
  try {
    const opened = openSqliteStore({ path: join(dir, "controller.sqlite") });
    assert.ok(opened.ok);
    const pragmas = opened.value.pragmas();
    opened.value.close();
    assert.equal(pragmas.journalMode, "wal");
    assert.equal(pragmas.synchronous, "full");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
