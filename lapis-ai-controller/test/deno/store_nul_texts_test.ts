// P-STO-21 under Deno: this runtime's node:sqlite stores a bound text whole but hands JS a read one cut at its first
// NUL; serve's store reads its free-text columns holding a NUL as BLOBs and decodes them (persistence/nul-text.ts).
// The same scenario runs under Node in test/unit/persistence/nul-texts.test.ts.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { readsCutAtNul } from "../../src/persistence/nul-text.ts";
import { NUL_TEXTS, nulTextsSurviveReopen } from "../support/nul-texts.ts";

test("P-STO-21 under Deno: a bound text keeps its NUL, a read one is cut (the reason for the whole-text reads), a BLOB read is whole", () => {
  const db = new DatabaseSync(":memory:");
  try {
    assert.equal(readsCutAtNul(db), true);
    db.exec("CREATE TABLE t (v TEXT) STRICT");
    for (const v of NUL_TEXTS) db.prepare("INSERT INTO t (v) VALUES (?)").run(v);
    const stored = db.prepare("SELECT v, octet_length(v) AS n, CAST(v AS BLOB) AS b FROM t").all() as { v: string; n: number; b: Uint8Array }[];
    assert.deepEqual(stored.map((r) => r.n), NUL_TEXTS.map((v) => Buffer.byteLength(v)));
    assert.deepEqual(stored.map((r) => r.v), NUL_TEXTS.map((v) => v.slice(0, v.indexOf("\u0000"))));
    assert.deepEqual(stored.map((r) => new TextDecoder("utf-8", { ignoreBOM: true }).decode(r.b)), [...NUL_TEXTS]);
  } finally {
    db.close();
  }
});

test("P-STO-21 under Deno: texts holding a NUL (message, tool and native ids, option ids, prompt, chunk and tool text, metadata, title, receipt) come back whole, and again after a reopen", () => {
  const dir = mkdtempSync(join(tmpdir(), "aic-deno-nul-texts-"));
  try {
    nulTextsSurviveReopen(join(dir, "controller.sqlite"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
