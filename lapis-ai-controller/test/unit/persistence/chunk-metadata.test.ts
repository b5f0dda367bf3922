// A streamed chunk's metadata `{"messageId": <id>}` repeats its message_id
// column, so the writer stores `{}` and readers give the id back from the
// column (journal-rules.ts storedMetadata / readMetadata): startup's pass
// then proves the common row with a constant comparison. What every reader
// hands out stays byte-identical, files written before keep validating and
// reading the same, and a row whose short form would be out of bounds fails
// closed.
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { readMetadata, storedMetadata } from "../../../src/persistence/journal-rules.ts";
import { engineStore } from "../../../src/persistence/engine-store.ts";
import { threadFixture, turnFixture } from "../../support/fixtures.ts";
import { openedStore as opened, readOut } from "../../support/journal-readout.ts";
import { openSqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { storeNul as raw } from "../../support/nul-corruptions.ts";
import { seedEveryTable } from "../../support/seeded-store.ts";
import { tempDir } from "../../support/temp.ts";

const CANARY = "CANARY-CHUNK-7d41e0b2";

function storedTexts(path: string): string[] {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return (db.prepare("SELECT metadata FROM journal ORDER BY journal_id").all() as { metadata: string }[]).map((r) => r.metadata);
  } finally {
    db.close();
  }
}

/** A thread with chunks as serve writes them (through the engine store), one of each shape a chunk's metadata takes. */
function chunkedFile(t: Parameters<typeof tempDir>[0]): string {
  const path = join(tempDir(t), "controller.sqlite");
  const store = opened(path);
  try {
    assert.ok(store.threads.insert(threadFixture()).ok);
    assert.ok(store.turns.insert(turnFixture()).ok);
    const engine = engineStore(store);
    const base = { threadId: "thread-1", turnId: "turn-1", visibility: "transcript" as const };
    engine.append({ ...base, type: "text", data: { messageId: "msg-1", text: "hello " } });
    engine.append({ ...base, type: "reasoning", data: { messageId: "rsn-1", text: "thinking" } });
    engine.append({ ...base, type: "text", data: { messageId: null, text: "no id" } });
    engine.append({ ...base, type: "text", data: { messageId: "méssage-✓", text: "non-ASCII id" } });
    engine.append({ ...base, type: "message_completed", data: { channel: "text", messageId: "msg-1" } });
    // An owner chunk with no thread fact's turn: read by lastThreadFact.
    assert.ok(store.journal.append({ threadId: "thread-1", turnId: null, visibility: "owner", kind: "text", messageId: "msg-o", metadata: { messageId: "msg-o" }, createdAt: 5 }).ok);
  } finally {
    store.close();
  }
  return path;
}

test("P-STO-40 a chunk's metadata is stored as {} beside its message id ([] where its payload is kept as its raw text, P-STO-42); every other shape is stored whole", (t) => {
  const path = chunkedFile(t);
  assert.deepEqual(storedTexts(path), ["[]", "[]", '{"messageId":null}', "[]", '{"channel":"text","messageId":"msg-1"}', "{}"]);
});

test("P-STO-40 readers hand out the same bytes for the short form as for the form written before (replay, owner journal, engine rows, thread facts), and both files validate", (t) => {
  const path = chunkedFile(t);
  const now = readOut(path);
  // The same rows in the form a file written before this change holds (and before P-STO-42 kept a chunk's payload as its raw text).
  raw(path, `UPDATE journal SET payload = json_object('text', payload), metadata = '{}' WHERE metadata = '[]';
    UPDATE journal SET metadata = json_object('messageId', message_id) WHERE metadata = '{}' AND kind IN ('text', 'reasoning')`);
  assert.deepEqual(storedTexts(path), ['{"messageId":"msg-1"}', '{"messageId":"rsn-1"}', '{"messageId":null}', '{"messageId":"méssage-✓"}',
    '{"channel":"text","messageId":"msg-1"}', '{"messageId":"msg-o"}']);
  assert.equal(readOut(path), now);
  const replay = (JSON.parse(now) as { replay: { events: { metadata: unknown; messageId: unknown }[] } }).replay.events;
  assert.deepEqual(replay.map((e) => e.metadata), [{ messageId: "msg-1" }, { messageId: "rsn-1" }, { messageId: null }, { messageId: "méssage-✓" },
    { channel: "text", messageId: "msg-1" }]);
  assert.deepEqual(replay.map((e) => e.messageId), ["msg-1", "rsn-1", null, "méssage-✓", "msg-1"]);
});

test("P-STO-40 a chunk whose metadata leaves out its own message id is refused (its short form would read back as the id); other metadata beside an id is stored whole", (t) => {
  const store = opened(join(tempDir(t), "controller.sqlite"));
  t.after(() => store.close());
  assert.ok(store.threads.insert(threadFixture()).ok);
  const base = { threadId: "thread-1", turnId: null, visibility: "transcript" as const, kind: "text", createdAt: 1, payload: { text: "x" } };
  const refused = store.journal.append({ ...base, messageId: "msg-1", metadata: {} });
  assert.deepEqual(refused.ok ? null : refused.error, { code: "invalid_params", retryable: false, where: "journal.metadata" });
  assert.ok(store.journal.append({ ...base, messageId: "msg-1", metadata: { messageId: "msg-2" } }).ok);
  assert.ok(store.journal.append({ ...base, messageId: "msg-1", metadata: { messageId: "msg-1", extra: 1 } }).ok);
  assert.ok(store.journal.append({ ...base, messageId: null, metadata: {} }).ok);
  assert.deepEqual(store.journal.replay("thread-1").events.map((e) => e.metadata), [{ messageId: "msg-2" }, { messageId: "msg-1", extra: 1 }, {}]);
});

test("P-STO-40 storedMetadata and readMetadata are inverse for every chunk and non-chunk shape", () => {
  const cases: ReadonlyArray<readonly [string, string | null, Record<string, unknown>]> = [
    ["text", "m", { messageId: "m" }], ["reasoning", "m", { messageId: "m" }], ["text", null, { messageId: null }], ["text", null, {}],
    ["text", "m", { messageId: "other" }], ["text", "m", { messageId: "m", n: 1 }], ["message_completed", "m", { messageId: "m" }],
    ["tool_begin", "m", {}], ["user_prompt", null, {}],
  ];
  for (const [kind, messageId, metadata] of cases) {
    const text = storedMetadata(kind, messageId, metadata);
    assert.ok(text !== undefined);
    assert.deepEqual(readMetadata(kind, messageId, text), metadata, `${kind} ${String(messageId)}`);
  }
  assert.equal(storedMetadata("text", "m", {}), undefined);
});

const FAILS: ReadonlyArray<readonly [string, string]> = [
  // A short form whose id would read back beyond METADATA_MAX_STRING: the pass's bound (256 bytes) and the JS rule (256 units).
  ["a chunk's {} beside a message id of 257 characters", `UPDATE journal SET kind = 'text', message_id = printf('%.257c', 'm') || '${CANARY}', metadata = '{}' WHERE seq = 1`],
  ["a chunk's {} beside a message id of 300 non-ASCII characters", `UPDATE journal SET kind = 'reasoning', message_id = printf('%.300c', 'é'), metadata = '{}' WHERE seq = 1`],
  ["a chunk's {} beside a message id with a NUL and 300 characters", `UPDATE journal SET kind = 'text', message_id = printf('%.300c', 'm') || char(0), metadata = '{}' WHERE seq = 1`],
  ["a chunk's {\"messageId\":null} beside a message id of 1,025 characters", `UPDATE journal SET kind = 'text', message_id = printf('%.1025c', 'm'), metadata = '{"messageId":null}' WHERE seq = 1`],
];

for (const [name, sql] of FAILS) {
  test(`P-STO-40 P-STO-06 journal: ${name} fails startup with storage_record_invalid (journal)`, (t) => {
    const path = join(tempDir(t), "controller.sqlite");
    seedEveryTable(path);
    raw(path, sql);
    const store = openSqliteStore({ path });
    if (store.ok) store.value.close();
    assert.deepEqual(store.ok ? null : store.error, { code: "storage_record_invalid", retryable: false, where: "journal" });
    assert.equal(JSON.stringify(store).includes(CANARY), false);
  });
}

test("P-STO-40 journal: a chunk's {} beside an id of 200 non-ASCII characters (over the pass's 256 bytes, within the rule's 256 units) passes, judged in JS, and reads back whole", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  seedEveryTable(path);
  const id = "é".repeat(200);
  raw(path, `UPDATE journal SET kind = 'text', message_id = '${id}', metadata = '{}' WHERE seq = 1`);
  const store = opened(path);
  t.after(() => store.close());
  assert.deepEqual(store.journal.replay("thread-1").events[0]?.metadata, { messageId: id });
});
