import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { describe, test } from "node:test";
import { LATEST_SCHEMA_VERSION, LATEST_TABLE_COLUMNS, MIGRATIONS, readSchemaVersion } from "../../../src/state/migrations.ts";
import { openStateStore } from "../../../src/state/store.ts";
import {
  openRun, PRIOR_VERSION_FIXTURES, databasePerTest, testClock, withRawDatabase,
} from "../../support/state-fixtures.ts";

const db = databasePerTest();
const clock = testClock();

describe("migrations", () => {
  test("migrations are numbered consecutively from 1", () => {
    assert.deepEqual(MIGRATIONS.map((m) => m.version), MIGRATIONS.map((_, i) => i + 1));
    assert.equal(LATEST_SCHEMA_VERSION, MIGRATIONS.length);
  });

  test("every prior schema version has a fixture", () => {
    assert.deepEqual(PRIOR_VERSION_FIXTURES.map((f) => f.version), [...Array(LATEST_SCHEMA_VERSION + 1).keys()]);
  });

  for (const fixture of PRIOR_VERSION_FIXTURES) {
    test(`a fixture database at schema version ${fixture.version} migrates and keeps its rows`, () => {
      fixture.build(db.path);
      const store = openRun(db.path, clock);
      try {
        assert.equal(store.status().schemaVersion, LATEST_SCHEMA_VERSION);
        if (fixture.version >= 1) {
          assert.equal(store.syncState().nextBatch, "s9");
          assert.equal(store.roomCursor("!room-a:example.org")?.baselineTsMs, 1_699_999_999_000);
        }
      } finally {
        store.close();
      }
      assert.equal(withRawDatabase(db.path, readSchemaVersion), LATEST_SCHEMA_VERSION);
    });
  }

  test("a fresh path is created with every table of the latest schema, each version recorded once", () => {
    openRun(db.path, clock).close();
    openRun(db.path, clock).close();
    withRawDatabase(db.path, (raw) => {
      for (const [table, columns] of Object.entries(LATEST_TABLE_COLUMNS)) {
        const actual = raw.prepare("SELECT name FROM pragma_table_info(?)").all(table).map((r) => r["name"]);
        assert.deepEqual(actual, [...columns], table);
      }
      const versions = raw.prepare("SELECT version FROM schema_migrations ORDER BY version").all().map((r) => r["version"]);
      assert.deepEqual(versions, MIGRATIONS.map((m) => m.version));
      assert.equal(raw.prepare("PRAGMA journal_mode").get()?.["journal_mode"], "wal");
    });
  });

  test("a database with a newer schema version is refused in both modes", () => {
    openRun(db.path, clock).close();
    withRawDatabase(db.path, (raw) => raw.prepare("INSERT INTO schema_migrations VALUES (?, 0)").run(LATEST_SCHEMA_VERSION + 1));
    for (const mode of ["run", "readonly"] as const) {
      const opened = openStateStore(db.path, { mode, now: clock.now });
      assert.equal(opened.ok, false);
      if (!opened.ok) assert.equal(opened.error.code, "state_schema_newer");
    }
    // The refused run open released its lock: a valid database opens again afterwards.
    withRawDatabase(db.path, (raw) => raw.prepare("DELETE FROM schema_migrations WHERE version > ?").run(LATEST_SCHEMA_VERSION));
    openRun(db.path, clock).close();
  });

  test("a database path in a missing directory fails as a value naming the errno", () => {
    const opened = openStateStore(`${db.dir}/missing/lisa.sqlite3`, { mode: "run", now: clock.now });
    assert.equal(opened.ok, false);
    if (!opened.ok) {
      assert.equal(opened.error.code, "state_io_failed");
      assert.match(opened.error.message, /ENOENT/);
    }
  });

  test("a file that is not a SQLite database fails closed", () => {
    writeFileSync(db.path, "this is not a database ".repeat(200));
    const opened = openStateStore(db.path, { mode: "run", now: clock.now });
    assert.equal(opened.ok, false);
    if (!opened.ok) assert.equal(opened.error.code, "state_corrupt");
  });

  test("a table missing a column fails closed", () => {
    openRun(db.path, clock).close();
    withRawDatabase(db.path, (raw) => raw.exec("ALTER TABLE room_cursors DROP COLUMN baseline_ts_ms"));
    const opened = openStateStore(db.path, { mode: "run", now: clock.now });
    assert.equal(opened.ok, false);
    if (!opened.ok) assert.equal(opened.error.code, "state_corrupt");
  });
});
