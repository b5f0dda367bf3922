// Streamed pieces of one block that arrive before the next group commit join
// one journal row (persistence/engine-store.ts): the same text, committed and
// heard at the same moment, as one event instead of one per piece. Anything
// queued in between, another block, a commit or the row's bound starts a new
// row, so the journal keeps the order of arrival.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import { setImmediate } from "node:timers/promises";
import type { JournalEntry } from "../../../src/domain/turn-store-port.ts";
import { engineStore, JOINED_TEXT_MAX } from "../../../src/persistence/engine-store.ts";
import { openSqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { threadFixture, turnFixture } from "../../support/fixtures.ts";
import { tempDir } from "../../support/temp.ts";

function fixture(t: TestContext, retention: "full" | "metadata-only" = "full") {
  const opened = openSqliteStore({ path: join(tempDir(t), "controller.sqlite") });
  assert.ok(opened.ok);
  const store = opened.value;
  t.after(() => store.close());
  assert.ok(store.threads.insert(threadFixture({ retention })).ok);
  assert.ok(store.turns.insert(turnFixture()).ok);
  let heard = 0;
  const engine = engineStore(store, () => { heard += 1; });
  const piece = (text: string, messageId: string | null = "m1", type = "text"): void =>
    engine.appendGrouped({ threadId: "thread-1", turnId: "turn-1", type, visibility: "transcript", data: { messageId, text } });
  const rows = (): string[] => store.journal.replay("thread-1").events.map((e) =>
    `${e.kind}:${String(e.metadata.messageId ?? "")}:${e.payloadUnavailable === true ? "?" : String((e.payload as { text?: unknown } | undefined)?.text ?? "")}`);
  return { store, engine, piece, rows, heard: () => heard };
}

test("P-PRF-05 P-ARC-14 pieces of one block queued before the commit are one row, heard once, after the COMMIT", async (t) => {
  const f = fixture(t);
  f.piece("Hello");
  f.piece(", ");
  f.piece("world");
  assert.deepEqual(f.rows(), [], "nothing before the commit");
  await setImmediate();
  assert.deepEqual(f.rows(), ["text:m1:Hello, world"]);
  assert.equal(f.heard(), 1);
  // After the commit a piece starts a row of its own.
  f.piece("!");
  await setImmediate();
  assert.deepEqual(f.rows(), ["text:m1:Hello, world", "text:m1:!"]);
  assert.equal(f.heard(), 2);
});

test("P-PRF-05 another block, another kind or anything queued between two pieces keeps them apart, in arrival order", async (t) => {
  const f = fixture(t);
  f.piece("a");
  f.piece("b", "m2");
  f.piece("c", "m2", "reasoning");
  f.piece("d", "m2", "reasoning");
  f.engine.appendGrouped({ threadId: "thread-1", turnId: "turn-1", type: "message_completed", visibility: "transcript", data: { channel: "reasoning", messageId: "m2" } });
  f.piece("e", "m2");
  f.engine.txGrouped(() => {});
  f.piece("f", "m2");
  f.piece("g", null);
  f.piece("h", null);
  await setImmediate();
  assert.deepEqual(f.rows(), ["text:m1:a", "text:m2:b", "reasoning:m2:cd", "message_completed:m2:", "text:m2:e", "text:m2:f", "text::gh"]);
});

test("P-PRF-05 a piece never joins a row already written (a transaction took the queue) and a joined row stays bounded", async (t) => {
  const f = fixture(t);
  f.piece("x");
  f.engine.tx(() => f.engine.append({ threadId: "thread-1", turnId: "turn-1", type: "diagnostic", visibility: "transcript", data: { severity: "info", text: "note" } }));
  f.piece("y");
  const half = "z".repeat(JOINED_TEXT_MAX / 2);
  f.piece(half);
  f.piece(half);
  await setImmediate();
  assert.deepEqual(f.rows().map((r) => r.length > 40 ? `${r.slice(0, 7)}<${r.length - 7}>` : r), ["text:m1:x", "diagnostic::note", `text:m1<${1 + 1 + JOINED_TEXT_MAX / 2}>`, `text:m1<${1 + JOINED_TEXT_MAX / 2}>`]);
});

test("P-PRF-05 P-STO-09 under metadata-only retention a joined row's text stays volatile and replays whole", async (t) => {
  const f = fixture(t, "metadata-only");
  f.piece("sec");
  f.piece("ond");
  await setImmediate();
  assert.deepEqual(f.rows(), ["text:m1:second"]);
  const stored = f.store.handle.db.prepare("SELECT payload_state, payload FROM journal WHERE kind = 'text'").all() as Array<{ payload_state: string; payload: unknown }>;
  assert.deepEqual(stored.map((r) => [r.payload_state, r.payload]), [["volatile", null]]);
  const entries: JournalEntry[] = f.engine.journal({ turnId: "turn-1", kinds: ["text"] });
  assert.deepEqual(entries.map((e) => e.data.text), ["second"]);
});
