import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import type { RetentionProfile } from "../../../src/domain/records.ts";
import { openSqliteStore, type SqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { markerFixture, threadFixture, turnFixture } from "../../support/fixtures.ts";
import { tempDir } from "../../support/temp.ts";

const PROMPT_CANARY = "CANARY-PROMPT-7f3a91c2";
const ANSWER_CANARY = "CANARY-ANSWER-b81d4e06";

function open(path: string): SqliteStore {
  const opened = openSqliteStore({ path });
  assert.ok(opened.ok, "store opens");
  return opened.value;
}

/** A thread with one turn, a user prompt, two answer chunks and one owner-only policy row. */
function writeTurn(store: SqliteStore, retention: RetentionProfile): void {
  assert.ok(store.threads.insert(threadFixture({ retention })).ok);
  assert.ok(store.turns.insert(turnFixture()).ok);
  const at = 2_000;
  const base = { threadId: "thread-1", turnId: "turn-1", createdAt: at };
  assert.ok(store.journal.append({ ...base, visibility: "transcript", kind: "user_message", payload: { text: PROMPT_CANARY } }).ok);
  assert.ok(store.journal.append({ ...base, visibility: "owner", kind: "policy_prepared", metadata: { approvalEffective: "ask" } }).ok);
  assert.ok(store.journal.append({ ...base, visibility: "transcript", kind: "agent_message", messageId: "m1", payload: { text: `${ANSWER_CANARY}-1` } }).ok);
  assert.ok(store.journal.append({ ...base, visibility: "transcript", kind: "agent_message", messageId: "m1", payload: { text: `${ANSWER_CANARY}-2` }, metadata: { final: true } }).ok);
  assert.ok(store.preparationMarkers.insert(markerFixture({ retention, payloadVolatile: retention === "metadata-only" })).ok);
}

function fileHolds(path: string, needle: string): boolean {
  return existsSync(path) && readFileSync(path).includes(Buffer.from(needle));
}

function dbPath(t: TestContext): string {
  return join(tempDir(t), "controller.sqlite");
}

/** The store written by writeTurn, closed and opened again (closed at test end). */
function reopenedAfterTurn(t: TestContext, retention: RetentionProfile): SqliteStore {
  const path = dbPath(t);
  const store = open(path);
  writeTurn(store, retention);
  store.close();
  const reopened = open(path);
  t.after(() => reopened.close());
  return reopened;
}

test("P-STO-09 metadata-only: prompt and answer canaries are in neither the database nor the -wal file after commit", (t) => {
  const path = dbPath(t);
  const store = open(path);
  writeTurn(store, "metadata-only");
  // Read the bytes while the store is still open (the WAL is not yet checkpointed), then after close.
  assert.ok(existsSync(`${path}-wal`), "the WAL file exists while open");
  for (const canary of [PROMPT_CANARY, ANSWER_CANARY]) {
    assert.equal(fileHolds(path, canary), false, "db holds no canary");
    assert.equal(fileHolds(`${path}-wal`, canary), false, "wal holds no canary");
  }
  store.close();
  for (const canary of [PROMPT_CANARY, ANSWER_CANARY]) {
    assert.equal(fileHolds(path, canary), false);
    assert.equal(fileHolds(`${path}-wal`, canary), false);
  }
});

test("P-STO-09 full retention keeps payloads durably (the contrast case)", (t) => {
  const reopened = reopenedAfterTurn(t, "full");
  const replay = reopened.journal.replay("thread-1");
  assert.equal(replay.complete, true);
  assert.equal(replay.unavailable, null);
  assert.deepEqual(replay.events.map((e) => e.payload), [{ text: PROMPT_CANARY }, { text: `${ANSWER_CANARY}-1` }, { text: `${ANSWER_CANARY}-2` }]);
});

test("P-STO-14 live replay of a metadata-only thread resolves payloads from volatile capture", (t) => {
  const store = open(dbPath(t));
  t.after(() => store.close());
  writeTurn(store, "metadata-only");
  const replay = store.journal.replay("thread-1");
  assert.equal(replay.complete, true);
  assert.equal(replay.unavailable, null);
  assert.deepEqual(replay.events.map((e) => [e.seq, e.payload]), [
    [1, { text: PROMPT_CANARY }],
    [2, { text: `${ANSWER_CANARY}-1` }],
    [3, { text: `${ANSWER_CANARY}-2` }],
  ]);
  assert.equal(replay.events[2]?.messageId, "m1", "logical message ids are kept (P-PRV-06)");
  assert.equal(replay.events[2]?.metadata.final, true, "completion markers are kept");
});

test("P-STO-13 metadata-only rows keep contiguous sequences 1..n, each with a payloadUnavailable marker after reopen", (t) => {
  const reopened = reopenedAfterTurn(t, "metadata-only");
  const replay = reopened.journal.replay("thread-1");
  assert.deepEqual(replay.events.map((e) => e.seq), [1, 2, 3]);
  for (const event of replay.events) {
    assert.equal(event.payloadUnavailable, true);
    assert.equal("payload" in event, false);
  }
  assert.deepEqual(replay.events.map((e) => e.kind), ["user_message", "agent_message", "agent_message"]);
});

test("P-STO-15 P-STO-16 after volatile payloads are lost, replay reports transcript_unavailable and never a complete empty history", (t) => {
  const reopened = reopenedAfterTurn(t, "metadata-only");
  for (const after of [0, 1, 2]) {
    const replay = reopened.journal.replay("thread-1", after);
    assert.equal(replay.complete, false);
    assert.deepEqual(replay.unavailable, { code: "transcript_unavailable", retryable: false });
    assert.ok(replay.events.length > 0);
  }
  // Past the end there is nothing left to lose: an empty tail is honest there.
  assert.equal(reopened.journal.replay("thread-1", 3).events.length, 0);
});

test("P-STO-07 preparation markers and owner journal keep policy metadata in journal order after payload loss", (t) => {
  const reopened = reopenedAfterTurn(t, "metadata-only");
  const marker = reopened.preparationMarkers.get("turn-1");
  assert.equal(marker?.approvalEffective, "ask");
  assert.equal(marker?.payloadVolatile, true);
  const owner = reopened.journal.ownerJournal();
  assert.deepEqual(owner.map((r) => [r.kind, r.visibility, r.seq]), [
    ["user_message", "transcript", 1],
    ["policy_prepared", "owner", null],
    ["agent_message", "transcript", 2],
    ["agent_message", "transcript", 3],
  ]);
  assert.ok(owner.every((r, i) => i === 0 || r.journalId > (owner[i - 1]?.journalId ?? 0)), "journal order is strictly increasing");
  assert.ok(owner.every((r) => r.payload === null), "the owner journal carries no payloads");
});

test("P-ARC-05 (store) owner-only journal rows never enter the public transcript replay", (t) => {
  const store = open(dbPath(t));
  t.after(() => store.close());
  writeTurn(store, "full");
  const kinds = store.journal.replay("thread-1").events.map((e) => e.kind);
  assert.equal(kinds.includes("policy_prepared"), false);
});

test("P-STO-08 turns persist only short error codes: exception text is refused, and neither db nor wal holds it", (t) => {
  const path = dbPath(t);
  const store = open(path);
  assert.ok(store.threads.insert(threadFixture({ retention: "metadata-only" })).ok);
  assert.ok(store.turns.insert(turnFixture()).ok);
  const exceptionText = `Error: provider crashed near ${PROMPT_CANARY}`;
  const refused = store.turns.setState("turn-1", "failed", 3_000, exceptionText);
  assert.deepEqual(refused, { ok: false, error: { code: "invalid_params", retryable: false, where: "turns.error_code" } });
  assert.throws(() => store.handle.db.prepare("UPDATE turns SET error_code = ? WHERE turn_id = 'turn-1'").run(exceptionText), /CHECK constraint/);
  const failed = store.turns.setState("turn-1", "failed", 3_000, "provider_exited");
  assert.ok(failed.ok);
  assert.match(failed.value.errorCode ?? "", /^[a-z][a-z0-9_]{0,63}$/);
  assert.equal(fileHolds(path, PROMPT_CANARY) || fileHolds(`${path}-wal`, PROMPT_CANARY), false);
  store.close();
});
