import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { acquireInstanceLock } from "../../../src/persistence/instance-lock.ts";
import { validateAllRecords } from "../../../src/persistence/record-validation.ts";
import { openSqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { startService } from "../../../src/service.ts";
import { NUL_CORRUPTIONS, storeNul } from "../../support/nul-corruptions.ts";
import { seedEveryTable } from "../../support/seeded-store.ts";
import { tempDir } from "../../support/temp.ts";

const CANARY = "CANARY-ROW-5be0c1d9";

/** Runs raw SQL on a closed store file, with CHECK constraints off so malformed rows can exist. */
const corrupt = storeNul;

const CORRUPTIONS: ReadonlyArray<readonly [string, string]> = [
  ["threads", `UPDATE threads SET config = 'not json ${CANARY}'`],
  ["turns", `UPDATE turns SET state = '${CANARY}'`],
  ["turns", `UPDATE turns SET error_code = 'Error: ${CANARY} at line 1'`],
  ["commands", `UPDATE commands SET receipt = '["${CANARY}"]'`],
  ["journal", `UPDATE journal SET metadata = json_object('text', '${CANARY}' || printf('%.300c', 'x')) WHERE seq = 1`],
  ["journal", `UPDATE journal SET payload_state = 'none' WHERE seq = 1`],
  ["interactions", `UPDATE interactions SET option_ids = '[1, "${CANARY}"]'`],
  ["workspace_leases", `UPDATE workspace_leases SET kind = '${CANARY}'`],
  ["provider_sessions", `UPDATE provider_sessions SET binding = '${CANARY}'`],
  ["auth_sessions", `UPDATE auth_sessions SET scopes = '"${CANARY}"'`],
  ["audit", `UPDATE audit SET details = json_object('nested', json_object('x', '${CANARY}'))`],
  ["preparation_markers", `UPDATE preparation_markers SET suppressed_by = 'restricted', approval_effective = 'allow-all', native_mode_requested = '${CANARY}'`],
  ["journal", `UPDATE journal SET seq = 5 WHERE seq = 2`],
  // The journal's SQL fast path (journal-validation.ts) must let none of these through.
  ["journal", `UPDATE journal SET payload = '{"text":"ok"}' || char(0) || '${CANARY}' WHERE seq = 1`],
  ["journal", `UPDATE journal SET metadata = '{"messageId":"m"}' || char(0) || '${CANARY}' WHERE seq = 1`],
  ["journal", `UPDATE journal SET kind = 'Text_${CANARY}' WHERE seq = 1`],
  ["journal", `UPDATE journal SET kind = 'text' || char(0) || '${CANARY}' WHERE seq = 1`],
  ["journal", `UPDATE journal SET message_id = printf('%.1025c', 'm') WHERE seq = 1`],
  ["journal", `UPDATE journal SET turn_id = 'bad id ${CANARY}' WHERE seq = 1`],
  ["journal", `UPDATE journal SET metadata = '{"9bad":"${CANARY}"}' WHERE seq = 1`],
  ["journal", `UPDATE journal SET created_at = -1 WHERE seq = 1`],
  ["journal", `UPDATE journal SET payload = '{"text":"unterminated ${CANARY}' WHERE seq = 1`],
  // The SQL proof of a streamed chunk's facts (kind, message id, `{"messageId": id}`) and payload placement in the one pass.
  ["journal", `UPDATE journal SET kind = 'text', message_id = '${CANARY}' || printf('%.300c', 'm'), metadata = json_object('messageId', '${CANARY}' || printf('%.300c', 'm')) WHERE seq = 1`],
  ["journal", `UPDATE journal SET kind = 'text', message_id = '', metadata = json_object('messageId', '') WHERE seq = 1`],
  ["journal", `UPDATE journal SET payload_state = 'volatile', payload = NULL WHERE seq = 1`],
  ["foreign_keys", `UPDATE turns SET thread_id = '${CANARY}'`],
];

for (const [index, [table, sql]] of CORRUPTIONS.entries()) {
  test(`P-STO-06 malformed retained row #${index + 1} (${table}) carrying a canary fails startup with storage_record_invalid, payload-free`, (t) => {
    const path = join(tempDir(t), "controller.sqlite");
    seedEveryTable(path);
    corrupt(path, sql);
    const opened = openSqliteStore({ path });
    assert.equal(opened.ok, false);
    if (opened.ok) return;
    assert.deepEqual(opened.error, { code: "storage_record_invalid", retryable: false, where: table });
    assert.equal(JSON.stringify(opened.error).includes(CANARY), false);
    const lock = acquireInstanceLock(path);
    assert.ok(lock.ok, "the failed open released the instance lock");
    lock.value.release();
  });
}

test("P-STO-07 preparation_markers have their own validator: a corrupted marker fails startup", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  seedEveryTable(path, "metadata-only");
  corrupt(path, "UPDATE preparation_markers SET payload_volatile = 0");
  const opened = openSqliteStore({ path });
  assert.deepEqual(opened.ok ? null : opened.error, { code: "storage_record_invalid", retryable: false, where: "preparation_markers" });
});

test("P-STO-06 a stored payload in a metadata-only thread fails startup (payload placement follows retention)", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  seedEveryTable(path, "metadata-only");
  corrupt(path, `UPDATE journal SET payload_state = 'stored', payload = '"${CANARY}"' WHERE seq = 1`);
  const opened = openSqliteStore({ path });
  assert.deepEqual(opened.ok ? null : opened.error, { code: "storage_record_invalid", retryable: false, where: "journal" });
});

test("P-STO-06 a journal without its UNIQUE (thread_id, seq) constraint fails startup, even when count, min and max of its sequence look contiguous", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  seedEveryTable(path);
  corrupt(path, `ALTER TABLE journal RENAME TO journal_old;
    CREATE TABLE journal (journal_id INTEGER PRIMARY KEY, thread_id TEXT NOT NULL REFERENCES threads(thread_id), turn_id TEXT REFERENCES turns(turn_id),
      seq INTEGER, visibility TEXT NOT NULL, kind TEXT NOT NULL, message_id TEXT, payload_state TEXT NOT NULL, payload TEXT,
      metadata TEXT NOT NULL, created_at INTEGER NOT NULL) STRICT;
    INSERT INTO journal SELECT * FROM journal_old;
    DROP TABLE journal_old;
    INSERT INTO journal (thread_id, turn_id, seq, visibility, kind, message_id, payload_state, payload, metadata, created_at)
      VALUES ('thread-1', 'turn-1', 3, 'transcript', 'agent_message', NULL, 'stored', '{"text":"${CANARY}"}', '{}', 1000);
    UPDATE journal SET seq = 1 WHERE seq = 2;`);
  const opened = openSqliteStore({ path });
  assert.deepEqual(opened.ok ? null : opened.error, { code: "storage_record_invalid", retryable: false, where: "journal" });
});

test("P-STO-05 after startup validation the schema's CHECK constraints are enforced on writes again", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  seedEveryTable(path);
  const opened = openSqliteStore({ path });
  assert.ok(opened.ok);
  t.after(() => opened.value.close());
  const db = opened.value.handle.db;
  assert.equal((db.prepare("PRAGMA ignore_check_constraints").get() as { ignore_check_constraints: number }).ignore_check_constraints, 0);
  assert.throws(() => db.prepare("UPDATE turns SET state = 'not_a_state'").run(), /CHECK constraint failed/);
});

test("P-STO-06 schema_version=999 fails startup with storage_version_unsupported", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  seedEveryTable(path);
  corrupt(path, "UPDATE schema_version SET version = 999");
  const opened = openSqliteStore({ path });
  assert.deepEqual(opened.ok ? null : opened.error, { code: "storage_version_unsupported", retryable: false });
});

test("P-STO-06 a database of unknown tables without a version fails storage_version_unsupported and is left untouched", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  corrupt(path, "CREATE TABLE other (x TEXT)");
  const opened = openSqliteStore({ path });
  assert.deepEqual(opened.ok ? null : opened.error, { code: "storage_version_unsupported", retryable: false });
  const db = new DatabaseSync(path, { readOnly: true });
  t.after(() => db.close());
  assert.deepEqual(db.prepare("SELECT name FROM sqlite_master").all().map((r) => r.name), ["other"]);
});

test("P-STO-05 startup validates every retained row before any later startup step (recovery, external work) runs", async (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  seedEveryTable(path);
  let stepRuns = 0;
  const step = () => {
    stepRuns += 1;
    return { ok: true as const, value: undefined };
  };
  corrupt(path, `UPDATE threads SET binding = '${CANARY}'`);
  const failed = await startService({ databasePath: path, retention: "full", startupSteps: [step] });
  assert.equal(failed.ok, false);
  assert.equal(stepRuns, 0, "no step ran on an invalid database");
  corrupt(path, "UPDATE threads SET binding = '{}'");
  const started = await startService({ databasePath: path, retention: "full", startupSteps: [step] });
  assert.ok(started.ok);
  assert.equal(stepRuns, 1);
  await started.value.stop();
});

test("P-STO-05 a valid database with a row in every table passes validation", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  seedEveryTable(path);
  const opened = openSqliteStore({ path });
  assert.ok(opened.ok);
  opened.value.close();
});

// A table of up to 8,192 rows is read at once, a larger one in pages of 8,192 (table-pages.ts PAGE_ROWS): either way every row is judged.
for (const [name, turns] of [["read at once", 8_191], ["read in two pages", 8_192], ["read in three pages", 16_384]] as const) {
  test(`P-STO-06 P-STO-43 a malformed last row of ${turns + 1} turns (${name}) fails startup with storage_record_invalid (turns); valid, they pass`, (t) => {
    const path = join(tempDir(t), "controller.sqlite");
    seedEveryTable(path);
    corrupt(path, `WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n WHERE i <= ${turns})
      INSERT INTO turns SELECT 'turn-' || n.i, thread_id, 'cmd-' || n.i, NULL, 'completed', workspace_id, provider, config_version, NULL,
        created_at, updated_at FROM turns, n WHERE turns.turn_id = 'turn-1'`);
    const valid = openSqliteStore({ path });
    assert.ok(valid.ok);
    valid.value.close();
    corrupt(path, `UPDATE turns SET state = '${CANARY}' WHERE rowid = (SELECT max(rowid) FROM turns)`);
    const opened = openSqliteStore({ path });
    assert.deepEqual(opened.ok ? null : opened.error, { code: "storage_record_invalid", retryable: false, where: "turns" });
  });
}

// Rows are read as arrays and judged by the statement's column names (record-validation.ts compiled): a column missing or extra
// fails as before, columns in another order are judged by name, and the interactions' rule between columns still holds.
const COMMANDS_COLUMNS = `principal TEXT NOT NULL, application TEXT NOT NULL, command_id TEXT NOT NULL, method TEXT NOT NULL,
  input_digest TEXT NOT NULL, receipt TEXT NOT NULL, created_at INTEGER NOT NULL`;
const COMMANDS_REBUILT: ReadonlyArray<readonly [string, string, string | null]> = [
  ["an extra column", `CREATE TABLE commands (${COMMANDS_COLUMNS}, note TEXT) STRICT; INSERT INTO commands SELECT *, '${CANARY}' FROM commands_old;`, "commands"],
  ["a column missing", `CREATE TABLE commands (${COMMANDS_COLUMNS.replace(", created_at INTEGER NOT NULL", "")}) STRICT;
    INSERT INTO commands SELECT principal, application, command_id, method, input_digest, receipt FROM commands_old;`, "commands"],
  ["its columns in another order", `CREATE TABLE commands (created_at INTEGER NOT NULL, receipt TEXT NOT NULL, ${COMMANDS_COLUMNS.replace(", receipt TEXT NOT NULL, created_at INTEGER NOT NULL", "")}) STRICT;
    INSERT INTO commands SELECT created_at, receipt, principal, application, command_id, method, input_digest FROM commands_old;`, null],
  ["its columns in another order and a malformed receipt", `CREATE TABLE commands (created_at INTEGER NOT NULL, receipt TEXT NOT NULL, ${COMMANDS_COLUMNS.replace(", receipt TEXT NOT NULL, created_at INTEGER NOT NULL", "")}) STRICT;
    INSERT INTO commands SELECT created_at, '["${CANARY}"]', principal, application, command_id, method, input_digest FROM commands_old;`, "commands"],
];
for (const [name, sql, where] of COMMANDS_REBUILT) {
  test(`P-STO-06 a commands table with ${name} ${where === null ? "passes" : "fails startup with storage_record_invalid (commands)"}`, (t) => {
    const path = join(tempDir(t), "controller.sqlite");
    seedEveryTable(path);
    corrupt(path, `ALTER TABLE commands RENAME TO commands_old; ${sql} DROP TABLE commands_old;`);
    const opened = openSqliteStore({ path });
    if (opened.ok) opened.value.close();
    assert.deepEqual(opened.ok ? null : opened.error, where === null ? null : { code: "storage_record_invalid", retryable: false, where });
  });
}

test("P-STO-06 a settled interaction without its settled_at fails startup (a rule between columns of a row read as an array)", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  seedEveryTable(path);
  corrupt(path, "UPDATE interactions SET state = 'settled', outcome = 'allow_once', settled_at = NULL");
  const opened = openSqliteStore({ path });
  assert.deepEqual(opened.ok ? null : opened.error, { code: "storage_record_invalid", retryable: false, where: "interactions" });
});

// Where node:sqlite cuts a text at its NUL (Deno 2.9), every value holding one is read as its BLOB, judged whole
// (nul-text.ts readsCutAtNul, journal-validation.ts nulSafe); here that reading is forced on Node. The Deno
// lane opens the same cases natively (test/deno/store_nul_test.ts).
for (const [where, sql] of NUL_CORRUPTIONS) {
  test(`P-STO-06 a ${where} value cut at a NUL fails startup closed when read as a runtime that cuts it would (${sql.slice(7, 60)})`, (t) => {
    const path = join(tempDir(t), "controller.sqlite");
    seedEveryTable(path);
    const valid = new DatabaseSync(path);
    t.after(() => valid.isOpen && valid.close());
    assert.deepEqual(validateAllRecords(valid, true), { ok: true, value: undefined });
    valid.close();
    storeNul(path, sql);
    // Forced, and as this runtime reads (Node: the whole text).
    for (const cut of [true, undefined]) {
      const db = new DatabaseSync(path);
      try {
        const result = cut === undefined ? validateAllRecords(db) : validateAllRecords(db, cut);
        assert.deepEqual(result, { ok: false, error: { code: "storage_record_invalid", retryable: false, where } }, `cut ${cut}`);
      } finally {
        db.close();
      }
    }
  });
}
