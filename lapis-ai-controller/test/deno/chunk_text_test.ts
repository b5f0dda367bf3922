// The Deno lane of P-STO-42: Deno's node:sqlite hands JS a read text cut at its first NUL, so a chunk's payload kept as
// its raw text (a free-text column, read as its BLOB when it holds a NUL) runs here too: the stored form, the readers'
// byte-identical rebuild, a NUL-holding chunk text whole, and every fail-closed case.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { readsCutAtNul } from "../../src/persistence/nul-text.ts";
import { openSqliteStore } from "../../src/persistence/sqlite-store.ts";
import { threadFixture } from "../support/fixtures.ts";
import "../unit/persistence/chunk-text.test.ts";

test("P-STO-42 under Deno: a chunk text holding a NUL, stored as itself, would be read cut, and the store reads it whole", () => {
  const dir = mkdtempSync(join(tmpdir(), "aic-deno-chunk-text-"));
  try {
    const path = join(dir, "controller.sqlite");
    const opened = openSqliteStore({ path });
    assert.ok(opened.ok);
    assert.ok(opened.value.threads.insert(threadFixture()).ok);
    assert.ok(opened.value.journal.append({ threadId: "thread-1", turnId: null, visibility: "transcript", kind: "text", messageId: "m", metadata: { messageId: "m" }, payload: { text: "é\u0000tail" }, createdAt: 1 }).ok);
    opened.value.close();
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      assert.equal(readsCutAtNul(db), true);
      assert.deepEqual({ ...db.prepare("SELECT metadata, payload FROM journal").get() }, { metadata: "[]", payload: "é" }, "a plain read cuts the raw text");
    } finally {
      db.close();
    }
    const reopened = openSqliteStore({ path });
    assert.ok(reopened.ok, JSON.stringify(reopened.ok ? null : reopened.error));
    try {
      assert.deepEqual(reopened.value.journal.replay("thread-1").events.map((e) => e.payload), [{ text: "é\u0000tail" }]);
    } finally {
      reopened.value.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
