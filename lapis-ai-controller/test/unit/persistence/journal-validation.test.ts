// The journal's startup validation proves some facts without a per-row check
// (journal-validation.ts): links through the pass, journal_id and seq ranges
// through the rowid and the UNIQUE (thread_id, seq) index, column types
// through the STRICT table and quick_check. Each case here breaks one of those
// proofs and must still fail startup closed, naming no value.
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { openSqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { storeNul } from "../../support/nul-corruptions.ts";
import { seedEveryTable } from "../../support/seeded-store.ts";
import { tempDir } from "../../support/temp.ts";

const CANARY = "CANARY-JOURNAL-3f9a2c71";

/** Raw SQL on a closed store file, CHECKs, foreign keys and defensive mode off. */
const corrupt = storeNul;

function openedError(path: string): unknown {
  const opened = openSqliteStore({ path });
  if (opened.ok) {
    opened.value.close();
    return null;
  }
  assert.equal(JSON.stringify(opened.error).includes(CANARY), false);
  return opened.error;
}

/** The journal rebuilt with `columns` (a schema another build could have made), its rows copied. */
function rebuildJournal(columns: string): string {
  return `ALTER TABLE journal RENAME TO journal_old;
    CREATE TABLE journal (${columns}, UNIQUE (thread_id, seq)) STRICT;
    INSERT INTO journal SELECT * FROM journal_old;
    DROP TABLE journal_old;`;
}

const V1_COLUMNS = `journal_id INTEGER PRIMARY KEY, thread_id TEXT NOT NULL REFERENCES threads(thread_id), turn_id TEXT REFERENCES turns(turn_id),
  seq INTEGER, visibility TEXT NOT NULL, kind TEXT NOT NULL, message_id TEXT, payload_state TEXT NOT NULL, payload TEXT,
  metadata TEXT NOT NULL, created_at INTEGER NOT NULL`;

/** A turn like the first, turn-3 of the same thread. */
const THIRD_TURN = `INSERT INTO turns SELECT 'turn-3', thread_id, 'cmd-3', attempt_of, state, workspace_id, provider, config_version, error_code,
  created_at, updated_at FROM turns WHERE turn_id = 'turn-1';`;

/** A second thread like the first, with no journal rows yet. */
const SECOND_THREAD = `INSERT INTO threads SELECT 'thread-2', principal, application, workspace_id, provider, retention, restricted, config_version,
  config, binding, created_at, updated_at FROM threads WHERE thread_id = 'thread-1';`;

const CASES: ReadonlyArray<readonly [string, string, string]> = [
  ["a row's turn id is well formed but names no turn", "foreign_keys", `UPDATE journal SET turn_id = 'turn-${CANARY}' WHERE seq = 1`],
  ["an owner row's thread id is well formed but names no thread", "foreign_keys", `UPDATE journal SET thread_id = 'thread-${CANARY}' WHERE seq IS NULL`],
  ["journal_id 0", "journal", `UPDATE journal SET journal_id = 0 WHERE seq = 1`],
  ["a negative journal_id", "journal", `UPDATE journal SET journal_id = -7 WHERE seq = 2`],
  ["seq 0", "journal", `UPDATE journal SET seq = 0 WHERE seq = 1`],
  ["a seq beyond a safe integer", "journal", `UPDATE journal SET seq = 9007199254740993 WHERE seq = 2`],
  ["an owner row given the next seq (the sequence looks contiguous)", "journal", `UPDATE journal SET seq = 3 WHERE seq IS NULL`],
  ["a sequenced row made an owner row", "journal", `UPDATE journal SET visibility = 'owner' WHERE seq = 2`],
  ["a NUL after non-ASCII text in a payload", "journal", `UPDATE journal SET payload = '{"text":"é ✓"}' || char(0) || '${CANARY}' WHERE seq = 1`],
  ["a payload column of type ANY holding a number (valid JSON, not a text)", "journal",
    rebuildJournal(V1_COLUMNS.replace("payload TEXT", "payload ANY")) + `UPDATE journal SET payload = 42 WHERE seq = 1`],
  ["a journal whose visibility compares case-insensitively", "journal",
    rebuildJournal(V1_COLUMNS.replace("visibility TEXT NOT NULL", "visibility TEXT NOT NULL COLLATE NOCASE")) + `UPDATE journal SET visibility = 'TRANSCRIPT' WHERE seq = 1`],
  ["a journal whose metadata column allows NULL", "journal",
    rebuildJournal(V1_COLUMNS.replace("metadata TEXT NOT NULL", "metadata TEXT"))],
  // The threads the rows name, proven from the distinct ids of the (thread_id, seq) index after the pass.
  ["a transcript row's thread id is well formed but names no thread", "foreign_keys", `UPDATE journal SET thread_id = 'thread-${CANARY}' WHERE seq = 1`],
  ["a row's thread id is not an id and names no thread", "journal", `UPDATE journal SET thread_id = 'bad id ${CANARY}' WHERE seq IS NULL`],
  // A row the pass cannot prove (metadata beyond a chunk's) judged in JS, its turn looked up there.
  ["a row judged in JS whose turn id is well formed but names no turn", "foreign_keys",
    `UPDATE journal SET turn_id = 'turn-${CANARY}', metadata = '{"messageId":"m","tool":"x"}' WHERE seq = 1`],
  // The bounds of the pass's chunk proof: the metadata's bytes bound the message id, the shift bounds created_at.
  ["a chunk's message id of 257 bytes in its metadata", "journal",
    `UPDATE journal SET kind = 'text', message_id = printf('%.257c', 'm'), metadata = json_object('messageId', printf('%.257c', 'm')) WHERE seq = 1`],
  ["a chunk's metadata naming a message id other than its own beyond 256 characters", "journal",
    `UPDATE journal SET kind = 'text', message_id = 'm', metadata = json_object('messageId', printf('%.300c', 'm')) WHERE seq = 1`],
  ["created_at 2^53", "journal", `UPDATE journal SET created_at = 9007199254740992 WHERE seq = 1`],
  ["a stored payload NULL (the clause meets a NULL)", "journal", `UPDATE journal SET payload = NULL WHERE seq = 1`],
  // The catalog, read in one statement: every table present and STRICT, the journal's UNIQUE (thread_id, seq) index exactly.
  ["a table other than the journal not STRICT", "audit",
    `CREATE TABLE audit_loose AS SELECT * FROM audit; DROP TABLE audit; ALTER TABLE audit_loose RENAME TO audit;`],
  ["a table missing", "preparation_markers", `DROP TABLE preparation_markers`],
  ["a journal whose only unique (thread_id, seq) index is partial", "journal",
    rebuildJournal(V1_COLUMNS).replace(", UNIQUE (thread_id, seq))", ")") + `CREATE UNIQUE INDEX j_seq ON journal(thread_id, seq) WHERE seq > 1;`],
  ["a journal whose unique index has its columns the other way round", "journal",
    rebuildJournal(V1_COLUMNS).replace("UNIQUE (thread_id, seq)", "UNIQUE (seq, thread_id)")],
  ["a journal whose unique index has a third column", "journal",
    rebuildJournal(V1_COLUMNS).replace("UNIQUE (thread_id, seq)", "UNIQUE (thread_id, seq, kind)")],
  ["a journal whose unique index has an expression beside (thread_id, seq)", "journal",
    rebuildJournal(V1_COLUMNS).replace(", UNIQUE (thread_id, seq))", ")") + `CREATE UNIQUE INDEX j_seq ON journal(thread_id, seq, kind || '');`],
  // The seek facts, read in one statement and applied in order: the threads' rows, then the sequences.
  ["a second thread's sequence starting at 2", "journal",
    `${SECOND_THREAD} INSERT INTO journal (thread_id, seq, visibility, kind, payload_state, metadata, created_at) VALUES ('thread-2', 2, 'transcript', 'text', 'none', '{}', 1000);`],
  ["a well-formed thread id naming no thread beside a second thread's valid sequence", "foreign_keys",
    `${SECOND_THREAD} INSERT INTO journal (thread_id, seq, visibility, kind, payload_state, metadata, created_at) VALUES
      ('thread-2', 1, 'transcript', 'text', 'none', '{}', 1000), ('thread-3-${CANARY}', 1, 'transcript', 'text', 'none', '{}', 1000);`],
  // The turns the rows name, proven per distinct turn id through journal_by_turn (a seek per turn), or per row without that index.
  ["a missing turn id between two existing ones", "foreign_keys",
    `${THIRD_TURN} UPDATE journal SET turn_id = 'turn-3' WHERE seq = 2; UPDATE journal SET turn_id = 'turn-2' WHERE seq IS NULL;`],
  ["a missing turn id after every existing one", "foreign_keys", `${THIRD_TURN} UPDATE journal SET turn_id = 'turn-9-${CANARY}' WHERE seq = 2`],
  ["a missing turn id without the journal_by_turn index (the per-row proof)", "foreign_keys",
    `DROP INDEX journal_by_turn; UPDATE journal SET turn_id = 'turn-${CANARY}' WHERE seq = 1`],
  ["a missing turn id equal to an existing one but for case, under a case-insensitive turn index", "foreign_keys",
    `DROP INDEX journal_by_turn; CREATE INDEX journal_by_turn ON journal(turn_id COLLATE NOCASE); UPDATE journal SET turn_id = 'TURN-1' WHERE seq = 1`],
  // The small tables' foreign keys, checked in one statement: a broken link in the last of them.
  ["a preparation marker naming no thread", "foreign_keys", `UPDATE preparation_markers SET thread_id = 'thread-${CANARY}'`],
];

for (const [name, where, sql] of CASES) {
  test(`P-STO-06 journal: ${name} fails startup with storage_record_invalid (${where})`, (t) => {
    const path = join(tempDir(t), "controller.sqlite");
    seedEveryTable(path);
    corrupt(path, sql);
    assert.deepEqual(openedError(path), { code: "storage_record_invalid", retryable: false, where });
  });
}

test("P-STO-06 journal: a value of the wrong type in a STRICT column (written around the schema) fails startup (integrity)", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  seedEveryTable(path);
  const table = (sql: string) => `UPDATE sqlite_schema SET sql = '${sql.replaceAll("'", "''")}' WHERE type = 'table' AND name = 'journal'`;
  const db = new DatabaseSync(path, { readOnly: true });
  const strictSql = String((db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'journal'").get() as { sql: string }).sql);
  db.close();
  // The row's facts match the pass's SQL proof of a chunk (metadata is json_object('messageId', message_id), 17..272 bytes); only its type is wrong.
  // The table declared loosely for one write (message_id BLOB keeps an integer an integer), then STRICT again.
  const loose = strictSql.replace(/\) STRICT$/, ")").replace("message_id TEXT", "message_id BLOB");
  assert.notEqual(loose, strictSql);
  corrupt(path, `PRAGMA writable_schema = ON; ${table(loose)}; PRAGMA writable_schema = RESET;`);
  corrupt(path, `UPDATE journal SET kind = 'text', message_id = 123456789, metadata = json_object('messageId', 123456789) WHERE seq = 1`);
  corrupt(path, `PRAGMA writable_schema = ON; ${table(strictSql)}; PRAGMA writable_schema = RESET;`);
  assert.deepEqual(openedError(path), { code: "storage_record_invalid", retryable: false, where: "integrity" });
});

test("P-STO-05 journal: non-ASCII payloads and message ids, owner rows and a second thread's sequence pass validation", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  seedEveryTable(path);
  corrupt(path, `INSERT INTO threads SELECT 'thread-2', principal, application, workspace_id, provider, retention, restricted, config_version,
      config, binding, created_at, updated_at FROM threads WHERE thread_id = 'thread-1';
    INSERT INTO journal (thread_id, turn_id, seq, visibility, kind, message_id, payload_state, payload, metadata, created_at) VALUES
      ('thread-1', 'turn-1', 3, 'transcript', 'text', 'méssage-1', 'stored', '{"text":"héllo ✓"}', json_object('messageId', 'méssage-1'), 1000),
      ('thread-2', NULL, 1, 'transcript', 'text', 'm-2', 'stored', '{"text":"two"}', '{"messageId":"m-2"}', 1000),
      ('thread-2', NULL, NULL, 'owner', 'policy_prepared', NULL, 'none', NULL, '{}', 1000),
      ('thread-2', NULL, 2, 'transcript', 'reasoning', NULL, 'stored', '"plain"', '{}', 1000)`);
  assert.equal(openedError(path), null);
});

test("P-STO-05 journal: the edges of the pass's proofs pass validation (NULL message id in a chunk's metadata, 256-byte id, created_at 2^53-1, a row judged in JS)", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  seedEveryTable(path);
  corrupt(path, `INSERT INTO journal (thread_id, turn_id, seq, visibility, kind, message_id, payload_state, payload, metadata, created_at) VALUES
      ('thread-1', 'turn-1', 3, 'transcript', 'text', NULL, 'stored', '{"text":"a"}', json_object('messageId', NULL), 1000),
      ('thread-1', 'turn-1', 4, 'transcript', 'text', printf('%.256c', 'm'), 'stored', '{"text":"b"}', json_object('messageId', printf('%.256c', 'm')), 1000),
      ('thread-1', 'turn-1', 5, 'transcript', 'reasoning', 'm-5', 'stored', '{"text":"c"}', '{"messageId":"m-5"}', 9007199254740991),
      ('thread-1', 'turn-1', 6, 'transcript', 'tool_begin', 'm-6', 'stored', '{"tool":"x"}', '{"messageId":"m-6","tool":"shell"}', 1000)`);
  assert.equal(openedError(path), null);
});

test("P-STO-05 journal: a thread without journal rows beside one with rows, and a store with no thread and no row, pass validation", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  seedEveryTable(path);
  corrupt(path, SECOND_THREAD);
  assert.equal(openedError(path), null);
  const empty = join(tempDir(t), "empty.sqlite");
  assert.equal(openedError(empty), null);
  assert.equal(openedError(empty), null);
});

test("P-STO-05 journal: rows naming several existing turns pass validation, with and without the journal_by_turn index", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  seedEveryTable(path);
  corrupt(path, `${THIRD_TURN} UPDATE journal SET turn_id = 'turn-3' WHERE seq = 2;`);
  assert.equal(openedError(path), null);
  corrupt(path, "DROP INDEX journal_by_turn");
  assert.equal(openedError(path), null);
});
