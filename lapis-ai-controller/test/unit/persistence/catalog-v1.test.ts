// Startup validation reads the catalog once (catalog-v1.ts): a catalog that
// is exactly schema v1's proves the tables STRICT and the journal's columns
// and indexes; any other catalog falls back to the pragma reads, and every
// deviation that matters still fails closed.
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { catalogIsV1, V1_AUTOINDEXES } from "../../../src/persistence/catalog-v1.ts";
import { SCHEMA_V1 } from "../../../src/persistence/schema.ts";
import { openSqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { seedEveryTable } from "../../support/seeded-store.ts";
import { tempDir } from "../../support/temp.ts";

/** Raw SQL on a closed store file, SQLite's defensive mode off (so the catalog itself can be written). */
function raw(path: string, sql: string): void {
  const db = new DatabaseSync(path, { defensive: false } as ConstructorParameters<typeof DatabaseSync>[1]);
  try {
    db.exec("PRAGMA foreign_keys = OFF");
    db.exec(sql);
  } finally {
    db.close();
  }
}

function isV1(path: string): boolean {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return catalogIsV1(db);
  } finally {
    db.close();
  }
}

function openError(path: string): unknown {
  const opened = openSqliteStore({ path });
  if (opened.ok) opened.value.close();
  return opened.ok ? null : opened.error;
}

test("P-STO-41 the automatic indexes of schema v1 are the ones SQLite makes from SCHEMA_V1, and a store made by this build has a v1 catalog", (t) => {
  const db = new DatabaseSync(":memory:");
  for (const statement of SCHEMA_V1) db.exec(statement);
  const auto = db.prepare("SELECT tbl_name AS t, count(*) AS n FROM sqlite_master WHERE name LIKE 'sqlite_autoindex_%' GROUP BY tbl_name").all() as { t: string; n: number }[];
  assert.deepEqual(Object.fromEntries(auto.map((r) => [r.t, r.n])), { ...V1_AUTOINDEXES });
  assert.equal(catalogIsV1(db), true);
  db.close();
  const path = join(tempDir(t), "controller.sqlite");
  seedEveryTable(path);
  assert.equal(isV1(path), true);
  assert.equal(openError(path), null);
});

test("P-STO-41 a catalog with one object more is not v1's and is judged by the pragma reads: an extra index passes, a journal rebuilt without its unique index fails closed", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  seedEveryTable(path);
  raw(path, "CREATE INDEX journal_by_kind ON journal(kind)");
  assert.equal(isV1(path), false);
  assert.equal(openError(path), null);
  raw(path, `DROP INDEX journal_by_kind; ALTER TABLE journal RENAME TO journal_old;
    CREATE TABLE journal (journal_id INTEGER PRIMARY KEY, thread_id TEXT NOT NULL, turn_id TEXT, seq INTEGER, visibility TEXT NOT NULL,
      kind TEXT NOT NULL, message_id TEXT, payload_state TEXT NOT NULL, payload TEXT, metadata TEXT NOT NULL, created_at INTEGER NOT NULL) STRICT;
    INSERT INTO journal SELECT * FROM journal_old; DROP TABLE journal_old; CREATE INDEX journal_by_turn ON journal(turn_id);`);
  assert.equal(isV1(path), false);
  assert.deepEqual(openError(path), { code: "storage_record_invalid", retryable: false, where: "journal" });
});

test("P-STO-41 a v1 table text changed in the catalog (STRICT dropped from the audit table's text) is not v1's and fails closed", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  seedEveryTable(path);
  raw(path, `PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = substr(sql, 1, length(sql) - length(' STRICT')) WHERE name = 'audit';
    PRAGMA writable_schema = RESET;`);
  assert.equal(isV1(path), false);
  assert.deepEqual(openError(path), { code: "storage_record_invalid", retryable: false, where: "audit" });
});

test("P-STO-41 a v1 catalog missing the journal's unique index row is not v1's and fails closed", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  seedEveryTable(path);
  raw(path, "PRAGMA writable_schema = ON; DELETE FROM sqlite_master WHERE name = 'sqlite_autoindex_journal_1'; PRAGMA writable_schema = RESET;");
  assert.equal(isV1(path), false);
  // SQLite itself refuses the schema (a UNIQUE constraint without its index's row) when it first reads it.
  assert.deepEqual(openError(path), { code: "storage_unavailable", retryable: false });
});

test("P-STO-41 a catalog repeating one v1 row in place of another (as many rows as v1's) is not v1's", () => {
  // SQLite refuses to load such a schema itself; the check does not lean on that. Its rows served as sqlite_master would serve them.
  const db = new DatabaseSync(":memory:");
  for (const statement of SCHEMA_V1) db.exec(statement);
  const rows = db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master").all() as Record<string, unknown>[];
  db.close();
  const served = (list: readonly Record<string, unknown>[]) => ({ prepare: () => ({ all: () => list }) }) as unknown as DatabaseSync;
  assert.equal(catalogIsV1(served(rows)), true);
  const byTurn = rows.find((r) => r.name === "journal_by_turn");
  assert.equal(catalogIsV1(served(rows.map((r) => (r.name === "turns_by_state" ? byTurn ?? r : r)))), false);
});

test("P-STO-41 an empty table rebuilt STRICT with a column missing is not v1's: its columns are still judged and startup fails closed", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  seedEveryTable(path);
  raw(path, `DROP TABLE workspace_leases; CREATE TABLE workspace_leases (workspace_id TEXT PRIMARY KEY, turn_id TEXT NOT NULL, kind TEXT NOT NULL,
    acquired_at INTEGER NOT NULL) STRICT;`);
  assert.equal(isV1(path), false);
  assert.deepEqual(openError(path), { code: "storage_record_invalid", retryable: false, where: "workspace_leases" });
});
