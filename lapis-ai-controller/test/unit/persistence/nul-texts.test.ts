// P-STO-21 on Node: texts holding a NUL go through serve's real store and come back whole, before and after a reopen
// (startup validation judges them whole); the same scenario runs under Deno in test/deno/store_nul_texts_test.ts.
// The free-text columns (nul-text.ts) are exactly the text columns whose startup check admits a NUL.
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { FREE_TEXT_COLUMNS } from "../../../src/persistence/nul-text.ts";
import { validateAllRecords } from "../../../src/persistence/record-validation.ts";
import { TABLES } from "../../../src/persistence/schema.ts";
import { openSqliteStore, type SqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { storeNul } from "../../support/nul-corruptions.ts";
import { assertNulTextsWhole, nulTextsSurviveReopen, writeNulTexts } from "../../support/nul-texts.ts";
import { seedEveryTable } from "../../support/seeded-store.ts";
import { tempDir } from "../../support/temp.ts";

function open(path: string): SqliteStore {
  const opened = openSqliteStore({ path });
  assert.ok(opened.ok, JSON.stringify(opened.ok ? null : opened.error));
  return opened.value;
}

test("P-STO-21 texts holding a NUL (message, tool and native ids, option ids, prompt, chunk and tool text, metadata, title, receipt) come back whole, and again after a reopen", (t) => {
  nulTextsSurviveReopen(join(tempDir(t), "controller.sqlite"));
});

test("P-STO-21 startup validation judges the stored NUL texts whole also when reading as a runtime that cuts them (each free text as its BLOB)", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  const store = open(path);
  writeNulTexts(store);
  store.close();
  const db = new DatabaseSync(path);
  try {
    assert.deepEqual(validateAllRecords(db, true), { ok: true, value: undefined });
    assert.deepEqual(validateAllRecords(db), { ok: true, value: undefined }, "as this runtime reads");
  } finally {
    db.close();
  }
});

test("P-STO-21 the free-text columns are exactly the text columns whose startup check admits a NUL, read as its BLOB or as this runtime reads", (t) => {
  const seed = join(tempDir(t), "seed.sqlite");
  seedEveryTable(seed);
  const probe = new DatabaseSync(seed);
  const columns = TABLES.flatMap((table) => (probe.prepare(`SELECT name, type FROM pragma_table_info('${table}')`).all() as { name: string; type: string }[])
    .filter((c) => c.type === "TEXT").map((c) => [table, c.name] as const));
  probe.close();
  assert.ok(columns.length > 40, `${columns.length} text columns`);
  for (const [table, column] of columns) {
    const path = join(tempDir(t), `${table}-${column}.sqlite`);
    seedEveryTable(path);
    // The payload column admits a NUL only as a chunk's raw text (P-STO-42): its stored rows made such chunks first (a JSON payload's NUL
    // is refused: support/nul-corruptions.ts).
    const payload = table === "journal" && column === "payload";
    if (payload) storeNul(path, "UPDATE journal SET kind = 'text', message_id = 'm', metadata = '[]' WHERE payload_state = 'stored'");
    storeNul(path, `UPDATE ${table} SET "${column}" = coalesce("${column}", 'v') || char(0) || 'x'${payload ? " WHERE payload_state = 'stored'" : ""}`);
    const free = FREE_TEXT_COLUMNS[table]?.includes(column) === true;
    // Forced, and as this runtime reads (Node: whole; Deno: as its BLOB).
    for (const cut of [true, undefined]) {
      const db = new DatabaseSync(path);
      try {
        assert.equal((cut === undefined ? validateAllRecords(db) : validateAllRecords(db, cut)).ok, free, `${table}.${column} read ${cut ? "as its BLOB" : "as this runtime reads"}`);
      } finally {
        db.close();
      }
    }
  }
});
