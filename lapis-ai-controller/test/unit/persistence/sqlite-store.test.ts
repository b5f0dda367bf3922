import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { openSqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { SCHEMA_VERSION, TABLES } from "../../../src/persistence/schema.ts";
import { tempDir } from "../../support/temp.ts";

test("P-STO-01 the store runs in WAL mode with synchronous=FULL, read live from PRAGMA", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  const opened = openSqliteStore({ path });
  assert.ok(opened.ok);
  const store = opened.value;
  t.after(() => store.close());
  assert.deepEqual(store.pragmas(), { journalMode: "wal", synchronous: "full", foreignKeys: true, schemaVersion: SCHEMA_VERSION });
  const raw = store.handle.db;
  assert.equal((raw.prepare("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode, "wal");
  assert.equal((raw.prepare("PRAGMA synchronous").get() as { synchronous: number }).synchronous, 2);
});

test("P-STO-01 schema v1 has every table STRICT and records its schema version", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  const opened = openSqliteStore({ path });
  assert.ok(opened.ok);
  opened.value.close();
  const db = new DatabaseSync(path, { readOnly: true });
  t.after(() => db.close());
  for (const table of TABLES) {
    const row = db.prepare("SELECT strict FROM pragma_table_list WHERE name = ?").get(table) as { strict: number } | undefined;
    assert.equal(row?.strict, 1, `${table} is STRICT`);
  }
  assert.deepEqual({ ...db.prepare("SELECT version FROM schema_version").get() }, { version: 1 });
});

test("P-STO-09 the database, its -wal and its lock file are created owner-only (0600)", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  const opened = openSqliteStore({ path });
  assert.ok(opened.ok);
  t.after(() => opened.value.close());
  for (const file of [path, `${path}-wal`, `${path}.lock`]) assert.equal(statSync(file).mode & 0o777, 0o600, file);
});

test("P-STO-05 an accessor prepares its statements at its first use, once: opening the store prepares none of them", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  const opened = openSqliteStore({ path });
  assert.ok(opened.ok);
  const store = opened.value;
  t.after(() => store.close());
  let prepares = 0;
  const db = store.handle.db;
  const prepare = db.prepare.bind(db);
  Object.defineProperty(db, "prepare", { value: (sql: string) => { prepares += 1; return prepare(sql); }, configurable: true });
  const threads = store.threads;
  assert.ok(prepares > 0, "the first use of the accessor prepared its statements");
  const afterFirst = prepares;
  assert.equal(store.threads, threads, "the same accessor every time");
  assert.equal(store.threads.get("thread-none"), undefined);
  assert.equal(prepares, afterFirst, "no statement prepared again");
  const turns = store.turns;
  assert.ok(prepares > afterFirst, "another accessor prepares its own at its first use");
  assert.equal(store.turns, turns);
});
