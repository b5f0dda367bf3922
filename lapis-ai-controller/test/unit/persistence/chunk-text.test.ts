// A streamed chunk's payload `{"text": <string>}` is stored as the text itself
// beside metadata `[]`, which stands for `{"messageId": <its message_id>}`
// (journal-rules.ts storedColumns / readPayload): startup's pass then proves
// such a row without json_valid and without the NUL check. What every reader
// hands out stays byte-identical, files written before keep validating and
// reading the same, a text holding a NUL comes back whole, and every row the
// raw form cannot stand for fails closed.
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { engineStore } from "../../../src/persistence/engine-store.ts";
import { journalFromRow } from "../../../src/persistence/journal-store.ts";
import { payloadJsonText, RAW_CHUNK_METADATA, readPayload, storedColumns, storedMetadata } from "../../../src/persistence/journal-rules.ts";
import { allColumns, textOf } from "../../../src/persistence/nul-text.ts";
import type { Row } from "../../../src/persistence/rows.ts";
import { threadFixture, turnFixture } from "../../support/fixtures.ts";
import { openedStore as opened, readOut } from "../../support/journal-readout.ts";
import { openSqliteStore, type SqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { storeNul as raw } from "../../support/nul-corruptions.ts";
import { seedEveryTable } from "../../support/seeded-store.ts";
import { tempDir } from "../../support/temp.ts";

const CANARY = "CANARY-CHUNK-TEXT-5b02c9e4";

/** Texts whose JSON form escapes something: quotes, backslashes, control characters, a NUL, U+2028, non-ASCII, an astral character, empty. */
const TEXTS = ["hello ", "say \"hi\"\\n", "tab\tnew\nline\r\u0001\u001f", "a\u0000b", "\u0000", "line\u2028sep", "é✓ 😀", "", "\uFEFFbom", "{\"text\":\"x\"}"];

type Stored = { kind: string; message_id: string | null; metadata: string; payload: string | null; payload_state: string };

/** The stored columns, read with every text whole (a NUL-holding payload as its BLOB where this runtime cuts, decoded). */
function storedRows(path: string): Stored[] {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const rows = db.prepare(`SELECT ${allColumns(db, "journal")} FROM journal ORDER BY journal_id`).all() as Row[];
    return rows.map((r) => {
      const record = journalFromRow(r, false);
      const payload = r.payload === null ? null : textOf(r.payload);
      return { kind: record.kind, message_id: record.messageId, metadata: String(r.metadata), payload, payload_state: record.payloadState };
    });
  } finally {
    db.close();
  }
}

/** A thread with chunks as serve writes them, each text of TEXTS, both chunk kinds, and the shapes the raw form does not take. */
function chunkedFile(t: Parameters<typeof tempDir>[0]): string {
  const path = join(tempDir(t), "controller.sqlite");
  const store = opened(path);
  try {
    assert.ok(store.threads.insert(threadFixture()).ok);
    assert.ok(store.turns.insert(turnFixture()).ok);
    const base = { threadId: "thread-1", turnId: "turn-1", visibility: "transcript" as const, createdAt: 7 };
    TEXTS.forEach((text, i) => {
      const kind = i % 2 === 0 ? "text" : "reasoning";
      assert.ok(store.journal.append({ ...base, kind, messageId: `msg-${i}`, metadata: { messageId: `msg-${i}` }, payload: { text } }).ok);
    });
    const append = (entry: Partial<Parameters<SqliteStore["journal"]["append"]>[0]>) => assert.ok(store.journal.append({ ...base, kind: "text", ...entry }).ok);
    append({ messageId: null, metadata: { messageId: null }, payload: { text: "no id" } });
    append({ messageId: "m", metadata: { messageId: "m", extra: 1 }, payload: { text: "extra metadata" } });
    append({ messageId: "m", metadata: { messageId: "m" }, payload: { text: "extra payload", more: 1 } });
    append({ messageId: "m", metadata: { messageId: "m" }, payload: { text: 5 } });
    append({ messageId: "m", metadata: { messageId: "m" }, payload: { text: "lone \ud800 surrogate" } });
    append({ messageId: "m", metadata: { messageId: "m" }, payload: ["text"] });
    append({ kind: "user_message", payload: { text: "a prompt" } });
    append({ messageId: "m", metadata: { messageId: "m" } });
    // An owner chunk: the raw form is the payload's storage, whatever the row's visibility; read by lastThreadFact.
    assert.ok(store.journal.append({ ...base, turnId: null, visibility: "owner", messageId: "msg-o", metadata: { messageId: "msg-o" }, kind: "text", payload: { text: "owner" } }).ok);
  } finally {
    store.close();
  }
  return path;
}

test("P-STO-42 a chunk's payload {text} is stored as the text itself beside metadata []; every other shape is stored as before", (t) => {
  const rows = storedRows(chunkedFile(t));
  assert.deepEqual(rows.slice(0, TEXTS.length).map((r) => [r.metadata, r.payload, r.payload_state]), TEXTS.map((text) => [RAW_CHUNK_METADATA, text, "stored"]));
  assert.deepEqual(rows.slice(TEXTS.length).map((r) => [r.metadata, r.payload]), [
    ['{"messageId":null}', '{"text":"no id"}'],
    ['{"messageId":"m","extra":1}', '{"text":"extra metadata"}'],
    ["{}", '{"text":"extra payload","more":1}'],
    ["{}", '{"text":5}'],
    ["{}", '{"text":"lone \\ud800 surrogate"}'],
    ["{}", '["text"]'],
    ["{}", '{"text":"a prompt"}'],
    ["{}", null],
    [RAW_CHUNK_METADATA, "owner"],
  ]);
});

test("P-STO-42 every reader rebuilds the bytes JSON.stringify gave: the JSON text, journalFromRow, replay, owner journal, engine rows and thread facts are those of the form written before, and both files validate", (t) => {
  const path = chunkedFile(t);
  const now = readOut(path);
  const rows = storedRows(path);
  for (const [i, text] of TEXTS.entries()) {
    const r = rows[i] as Stored;
    assert.equal(payloadJsonText(r.kind, r.message_id, r.metadata, r.payload as string), JSON.stringify({ text }), `text ${i}`);
    assert.deepEqual(readPayload(r.kind, r.message_id, r.metadata, r.payload as string), { text });
  }
  // The same rows as a file written before holds them: the payload's JSON text beside `{}` (P-STO-40), then the long metadata.
  const db = new DatabaseSync(path);
  try {
    const update = db.prepare("UPDATE journal SET payload = ?, metadata = '{}' WHERE journal_id = ?");
    const all = db.prepare(`SELECT journal_id, ${allColumns(db, "journal")} FROM journal WHERE metadata = '[]'`).all() as Row[];
    for (const row of all) {
      const record = journalFromRow(row, true);
      update.run(JSON.stringify(record.payload), record.journalId);
    }
  } finally {
    db.close();
  }
  assert.equal(storedRows(path).some((r) => r.metadata === RAW_CHUNK_METADATA), false);
  assert.equal(readOut(path), now, "the P-STO-40 form reads the same");
  raw(path, "UPDATE journal SET metadata = json_object('messageId', message_id) WHERE metadata = '{}' AND kind IN ('text', 'reasoning') AND message_id IS NOT NULL");
  assert.equal(readOut(path), now, "the form written before P-STO-40 reads the same");
  const replay = (JSON.parse(now) as { replay: { events: { payload?: unknown; metadata: unknown }[] } }).replay.events;
  assert.deepEqual(replay.slice(0, TEXTS.length).map((e) => [e.metadata, e.payload]), TEXTS.map((text, i) => [{ messageId: `msg-${i}` }, { text }]));
});

test("P-STO-42 a chunk text holding a NUL is stored whole, validates, and comes back whole through replay, the engine's rows and a reopen", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  const texts = ["a\u0000b", "\u0000", "x\u0000", "é\u0000ü😀", "\uFEFF\u0000bom"];
  const write = opened(path);
  try {
    assert.ok(write.threads.insert(threadFixture()).ok);
    texts.forEach((text, i) => assert.ok(write.journal.append({ threadId: "thread-1", turnId: null, visibility: "transcript", kind: "text", messageId: `m-${i}`, metadata: { messageId: `m-${i}` }, payload: { text }, createdAt: i }).ok));
  } finally {
    write.close();
  }
  const db = new DatabaseSync(path, { readOnly: true });
  const bytes = (db.prepare("SELECT octet_length(payload) AS n, metadata FROM journal ORDER BY seq").all() as { n: number; metadata: string }[])
    .map((r) => ({ n: r.n, metadata: r.metadata }));
  db.close();
  assert.deepEqual(bytes, texts.map((v) => ({ n: Buffer.byteLength(v), metadata: RAW_CHUNK_METADATA })));
  const store = opened(path);
  t.after(() => store.close());
  assert.deepEqual(store.journal.replay("thread-1").events.map((e) => e.payload), texts.map((text) => ({ text })));
  assert.deepEqual(engineStore(store).journal({ threadId: "thread-1" }).map((e) => e.data.text), texts);
});

test("P-STO-42 storedColumns: the raw form exactly for a stored {text} chunk payload beside the short metadata, inverse of readPayload", () => {
  const cases: ReadonlyArray<readonly [string, string | null, Record<string, unknown>, unknown, boolean]> = [
    ["text", "m", { messageId: "m" }, { text: "x" }, true], ["reasoning", "m", { messageId: "m" }, { text: "" }, true],
    ["text", "m", { messageId: "m" }, undefined, false], ["text", null, { messageId: null }, { text: "x" }, false],
    ["text", "m", { messageId: "n" }, { text: "x" }, false], ["message_completed", "m", { messageId: "m" }, { text: "x" }, false],
    ["text", "m", { messageId: "m" }, { text: "\udfff" }, false], ["text", "m", { messageId: "m" }, null, false], ["text", "m", { messageId: "m" }, "x", false],
  ];
  for (const [kind, messageId, metadata, payload, rawForm] of cases) {
    const text = storedMetadata(kind, messageId, metadata) as string;
    const stored = storedColumns(kind, messageId, text, payload);
    assert.equal(stored.metadata === RAW_CHUNK_METADATA, rawForm, `${kind} ${JSON.stringify(payload)}`);
    if (payload === undefined) assert.equal(stored.payload, null);
    else {
      assert.deepEqual(readPayload(kind, messageId, stored.metadata, stored.payload as string), payload);
      assert.equal(payloadJsonText(kind, messageId, stored.metadata, stored.payload as string), JSON.stringify(payload));
    }
  }
});

/** [name, retention of the seeded file, SQL on its first transcript row (a stored user_message of thread-1, turn-1)]. */
const FAILS: ReadonlyArray<readonly [string, "full" | "metadata-only", string]> = [
  ["[] beside a kind that is no chunk", "full", `UPDATE journal SET message_id = '${CANARY}', metadata = '[]' WHERE seq = 1`],
  ["[] beside a contract kind whose metadata is not the id alone", "full", `UPDATE journal SET kind = 'message_completed', message_id = 'm', metadata = '[]' WHERE seq = 1`],
  ["[] beside a NULL message id", "full", `UPDATE journal SET kind = 'text', message_id = NULL, metadata = '[]', payload = '${CANARY}' WHERE seq = 1`],
  ["[] beside an empty message id", "full", `UPDATE journal SET kind = 'text', message_id = '', metadata = '[]' WHERE seq = 1`],
  ["[] beside a message id of 257 characters", "full", `UPDATE journal SET kind = 'text', message_id = printf('%.257c', 'm'), metadata = '[]', payload = '${CANARY}' WHERE seq = 1`],
  ["[] beside a message id of 300 non-ASCII characters", "full", `UPDATE journal SET kind = 'reasoning', message_id = printf('%.300c', 'é'), metadata = '[]' WHERE seq = 1`],
  ["[] beside a message id with a NUL and 300 characters", "full", `UPDATE journal SET kind = 'text', message_id = printf('%.300c', 'm') || char(0), metadata = '[]' WHERE seq = 1`],
  ["[] with a NULL payload, stored", "full", `UPDATE journal SET kind = 'text', message_id = 'm', metadata = '[]', payload = NULL WHERE seq = 1`],
  ["[] with payload_state none and no payload", "full", `UPDATE journal SET kind = 'text', message_id = 'm', metadata = '[]', payload_state = 'none', payload = NULL WHERE seq = 1`],
  ["[] with payload_state volatile and a payload", "full", `UPDATE journal SET kind = 'text', message_id = 'm', metadata = '[]', payload_state = 'volatile' WHERE seq = 1`],
  ["[] with payload_state volatile and a payload (metadata-only thread)", "metadata-only", `UPDATE journal SET kind = 'text', message_id = 'm', metadata = '[]', payload = '${CANARY}' WHERE seq = 1`],
  ["[] with payload_state volatile and no payload (metadata-only thread)", "metadata-only", `UPDATE journal SET kind = 'text', message_id = 'm', metadata = '[]' WHERE seq = 1`],
  ["[] with a stored payload in a metadata-only thread", "metadata-only", `UPDATE journal SET kind = 'text', message_id = 'm', metadata = '[]', payload_state = 'stored', payload = '${CANARY}' WHERE seq = 1`],
  ["[] with a NUL after it", "full", `UPDATE journal SET kind = 'text', message_id = 'm', metadata = '[]' || char(0) || 'x' WHERE seq = 1`],
  ["[ ] (not the constant)", "full", `UPDATE journal SET kind = 'text', message_id = 'm', metadata = '[ ]', payload = '${CANARY}' WHERE seq = 1`],
  ["a chunk kind with a NUL after it beside []", "full", `UPDATE journal SET kind = 'text' || char(0) || 'x', message_id = 'm', metadata = '[]' WHERE seq = 1`],
  ["a raw text beside {} (the payload no JSON)", "full", `UPDATE journal SET kind = 'text', message_id = 'm', metadata = '{}', payload = '${CANARY}' WHERE seq = 1`],
  ["a raw text beside the long metadata (the payload no JSON)", "full", `UPDATE journal SET kind = 'text', message_id = 'm', metadata = '{"messageId":"m"}', payload = 'x' WHERE seq = 1`],
];

for (const [name, retention, sql] of FAILS) {
  test(`P-STO-42 P-STO-06 journal: ${name} fails startup with storage_record_invalid (journal)`, (t) => {
    const path = join(tempDir(t), "controller.sqlite");
    seedEveryTable(path, retention);
    raw(path, sql);
    const store = openSqliteStore({ path });
    if (store.ok) store.value.close();
    assert.deepEqual(store.ok ? null : store.error, { code: "storage_record_invalid", retryable: false, where: "journal" });
    assert.equal(JSON.stringify(store).includes(CANARY), false);
  });
}

test("P-STO-42 journal: the raw form's edges pass (an owner chunk, any text as payload, an id of 256 bytes, an id of 200 non-ASCII characters judged in JS) and read back whole", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  seedEveryTable(path);
  const long = "é".repeat(200);
  raw(path, `UPDATE journal SET kind = 'text', message_id = '${long}', metadata = '[]', payload = 'not { json' WHERE seq = 1;
    UPDATE journal SET kind = 'reasoning', message_id = printf('%.256c', 'r'), metadata = '[]', payload = '' WHERE seq = 2;
    UPDATE journal SET kind = 'text', message_id = 'o', metadata = '[]', payload_state = 'stored', payload = char(0) WHERE seq IS NULL`);
  const store = opened(path);
  t.after(() => store.close());
  assert.deepEqual(store.journal.replay("thread-1").events.map((e) => [e.metadata, e.payload]), [
    [{ messageId: long }, { text: "not { json" }], [{ messageId: "r".repeat(256) }, { text: "" }],
  ]);
  assert.deepEqual(store.journal.ownerJournal().filter((r) => r.visibility === "owner").map((r) => r.metadata), [{ messageId: "o" }]);
  assert.deepEqual(engineStore(store).journal({ threadId: "thread-1" }).filter((e) => e.visibility === "owner").map((e) => e.data), [{ messageId: "o", text: "\u0000" }]);
});
