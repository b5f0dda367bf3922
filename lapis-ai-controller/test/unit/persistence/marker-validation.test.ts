// Startup reads preparation markers as arrays (in pages above PAGE_ROWS rows, table-pages.ts) and judges them by the marker
// store's own shape and rules (preparation-markers.ts MARKER_SHAPE, markerRulesHold): every corruption of a marker fails
// startup closed, naming only the table, whether the marker is the only one or sits in a later page of many, and the marker
// store's object validator (validPreparationMarkerRow, the one definition) refuses the same row. Most markers are proven in
// SQL (MARKER_PROVEN) without being read: a marker it does not prove is read and judged, so a valid one outside its proof
// still opens, and one naming no turn or thread fails its foreign key check.
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { validPreparationMarkerRow } from "../../../src/persistence/preparation-markers.ts";
import type { Row } from "../../../src/persistence/rows.ts";
import { openSqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { PAGE_ROWS } from "../../../src/persistence/table-pages.ts";
import { storeNul } from "../../support/nul-corruptions.ts";
import { seedEveryTable } from "../../support/seeded-store.ts";
import { tempDir } from "../../support/temp.ts";

const CANARY = "CANARY-MARKER-3f9a27c1";

/** [what is wrong, the SET clause that makes the marker so]; each one row invalid by its shape or its rules. */
const CORRUPTIONS: ReadonlyArray<readonly [string, string]> = [
  ["turn_id not an id", `turn_id = 'bad id ${CANARY}'`],
  ["thread_id not an id", `thread_id = '-${CANARY}'`],
  ["config_version 0", `config_version = 0`],
  ["config_version negative", `config_version = -3`],
  ["retention unknown", `retention = '${CANARY}'`],
  ["approval_requested unknown", `approval_requested = '${CANARY}', approval_effective = '${CANARY}'`],
  ["approval_requested unknown under a restricted suppression", `approval_requested = '${CANARY}', approval_effective = 'ask', suppressed_by = 'restricted'`],
  ["approval_effective unknown", `approval_effective = '${CANARY}'`],
  ["suppressed_by unknown", `suppressed_by = '${CANARY}'`],
  ["native_mode_requested empty", `native_mode_requested = ''`],
  ["native_mode_requested over 1,024 characters", `native_mode_requested = '${CANARY}' || printf('%.1024c', 'm')`],
  ["native_mode_result unknown", `native_mode_result = '${CANARY}'`],
  ["payload_volatile 2", `payload_volatile = 2`],
  ["prepared_at negative", `prepared_at = -1`],
  ["restricted suppression with allow-all effective", `approval_requested = 'allow-all', approval_effective = 'allow-all', suppressed_by = 'restricted', native_mode_requested = '${CANARY}'`],
  ["no suppression, effective not the requested", `approval_requested = 'allow-all', approval_effective = 'ask'`],
  ["metadata-only without a volatile payload", `retention = 'metadata-only', payload_volatile = 0`],
  ["a NUL after a valid retention", `retention = retention || char(0) || '${CANARY}'`],
  ["a NUL after a valid turn id", `turn_id = turn_id || char(0) || '${CANARY}'`],
];

/** Adds `extra` valid turns (`turn-m<n>`) and their markers after the fixture's, so the markers fill more than one page. */
function manyMarkers(path: string, extra: number): void {
  storeNul(path, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${extra})
    INSERT INTO turns (turn_id, thread_id, command_id, attempt_of, state, workspace_id, provider, config_version, error_code, created_at, updated_at)
      SELECT 'turn-m' || i, thread_id, 'cmd-m' || i, NULL, state, workspace_id, provider, config_version, error_code, created_at, updated_at
      FROM n, turns WHERE turn_id = 'turn-1';
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${extra})
    INSERT INTO preparation_markers SELECT 'turn-m' || i, thread_id, config_version, retention, approval_requested, approval_effective,
      suppressed_by, native_mode_requested, native_mode_result, payload_volatile, prepared_at + i FROM n, preparation_markers WHERE turn_id = 'turn-1';`);
}

/** The marker with the highest rowid (the last one read) as the marker store's validator sees it. */
function lastMarker(path: string): Row {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return db.prepare("SELECT * FROM preparation_markers ORDER BY rowid DESC LIMIT 1").get() as Row;
  } finally {
    db.close();
  }
}

const PLACES: ReadonlyArray<readonly [string, number]> = [
  ["the only marker (one read)", 0],
  ["the last marker of a later page (paged read)", PAGE_ROWS + 5],
];

for (const [place, extra] of PLACES) {
  test(`P-STO-07 P-STO-44 valid preparation markers pass startup: ${place}`, (t) => {
    const path = join(tempDir(t), "controller.sqlite");
    seedEveryTable(path);
    manyMarkers(path, extra);
    const opened = openSqliteStore({ path });
    assert.equal(opened.ok, true);
    if (opened.ok) opened.value.close();
  });

  for (const [name, set] of CORRUPTIONS) {
    test(`P-STO-07 P-STO-44 a preparation marker with ${name} fails startup closed, payload-free: ${place}`, (t) => {
      const path = join(tempDir(t), "controller.sqlite");
      seedEveryTable(path);
      manyMarkers(path, extra);
      storeNul(path, `UPDATE preparation_markers SET ${set} WHERE rowid = (SELECT max(rowid) FROM preparation_markers)`);
      if (!set.includes("char(0)")) assert.equal(validPreparationMarkerRow(lastMarker(path)), false, "the marker store's validator refuses the row too");
      const opened = openSqliteStore({ path });
      assert.deepEqual(opened.ok ? null : opened.error, { code: "storage_record_invalid", retryable: false, where: "preparation_markers" });
      assert.equal(JSON.stringify(opened.ok ? null : opened.error).includes(CANARY), false);
    });
  }
}

/** [what is valid about it, the SET clause]: markers outside MARKER_PROVEN's proof that the marker store accepts. */
const UNPROVEN_VALID: ReadonlyArray<readonly [string, string]> = [
  ["a requested mode with a non-ASCII character", `native_mode_requested = 'mod' || char(233)`],
  ["a requested mode of 1,024 characters, one non-ASCII", `native_mode_requested = printf('%.1023c', 'm') || char(233)`],
  ["a requested mode of 1,024 ASCII characters", `native_mode_requested = printf('%.1024c', 'm')`],
];

for (const [place, extra] of PLACES) {
  for (const [name, set] of UNPROVEN_VALID) {
    test(`P-STO-07 P-STO-44 a valid preparation marker outside the SQL proof (${name}) passes startup: ${place}`, (t) => {
      const path = join(tempDir(t), "controller.sqlite");
      seedEveryTable(path);
      manyMarkers(path, extra);
      storeNul(path, `UPDATE preparation_markers SET ${set} WHERE rowid = (SELECT max(rowid) FROM preparation_markers)`);
      assert.equal(validPreparationMarkerRow(lastMarker(path)), true);
      const opened = openSqliteStore({ path });
      assert.equal(opened.ok, true);
      if (opened.ok) opened.value.close();
    });
  }

  for (const [name, set] of [["no turn", `turn_id = 'turn-${CANARY}'`], ["no thread", `thread_id = 'thread-${CANARY}'`]] as const) {
    test(`P-STO-07 P-STO-44 a valid preparation marker naming ${name} fails startup's foreign key check: ${place}`, (t) => {
      const path = join(tempDir(t), "controller.sqlite");
      seedEveryTable(path);
      manyMarkers(path, extra);
      storeNul(path, `UPDATE preparation_markers SET ${set} WHERE rowid = (SELECT max(rowid) FROM preparation_markers)`);
      assert.equal(validPreparationMarkerRow(lastMarker(path)), true);
      const opened = openSqliteStore({ path });
      assert.deepEqual(opened.ok ? null : opened.error, { code: "storage_record_invalid", retryable: false, where: "foreign_keys" });
      assert.equal(JSON.stringify(opened.ok ? null : opened.error).includes(CANARY), false);
    });
  }
}

test("P-STO-07 P-STO-44 a preparation_markers table with a column beyond the marker's shape fails startup closed", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  seedEveryTable(path);
  storeNul(path, `ALTER TABLE preparation_markers ADD COLUMN extra TEXT; UPDATE preparation_markers SET extra = '${CANARY}'`);
  const opened = openSqliteStore({ path });
  assert.deepEqual(opened.ok ? null : opened.error, { code: "storage_record_invalid", retryable: false, where: "preparation_markers" });
});
