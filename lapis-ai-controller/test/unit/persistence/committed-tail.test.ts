// The engine store hands each transcript row to the committed tail only after
// its COMMIT (persistence/engine-store.ts `committed`, domain/event-tail.ts),
// and a page from the tail is, byte for byte, the replay page of the same
// cursor: what a subscription sends does not depend on where it was read.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import { setImmediate } from "node:timers/promises";
import { EventTail } from "../../../src/domain/event-tail.ts";
import { engineStore } from "../../../src/persistence/engine-store.ts";
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
  const tail = new EventTail();
  tail.watch("thread-1");
  const engine = engineStore(store, () => {}, undefined, (record) => tail.committed(record));
  const event = (type: string, data: Record<string, unknown>): void => engine.appendGrouped({ threadId: "thread-1", turnId: "turn-1", type, visibility: "transcript", data });
  const direct = (type: string, data: Record<string, unknown>): number => engine.append({ threadId: "thread-1", turnId: "turn-1", type, visibility: "transcript", data });
  const fromTail = (cursor: number): string[] | null => tail.page("thread-1", cursor)?.map((e) => e.json) ?? null;
  const fromJournal = (cursor: number): string[] => store.journal.replay("thread-1", cursor).events.map((e) => JSON.stringify(e));
  return { store, engine, tail, event, direct, fromTail, fromJournal };
}

test("P-PRF-18 P-STO-40 every page the tail serves is the replay page of the same cursor, byte for byte", async (t) => {
  const f = fixture(t);
  f.event("text", { messageId: "m1", text: "Hello" });
  f.event("reasoning", { messageId: null, text: "thinking \u0000 with a NUL" });
  f.event("text", { messageId: "m1", text: " world", extra: 7 });
  f.event("tool_call", { toolCallId: "c1", title: "Read", rawInput: { path: "/x", nested: [1, -0, "\u{1F600}", null] }, status: "pending" });
  await setImmediate();
  f.engine.tx(() => {
    f.direct("message_completed", { channel: "text", messageId: "m1" });
    f.event("text", { messageId: "m2", text: "inside a transaction" });
    f.direct("turn_outcome", { state: "completed", errorCode: null });
  });
  const last = f.store.journal.lastSeq("thread-1");
  assert.equal(last, 7);
  assert.notEqual(f.fromTail(0), null, "the tail holds the whole turn");
  for (let cursor = 0; cursor < last; cursor++) assert.deepEqual(f.fromTail(cursor), f.fromJournal(cursor), `cursor ${cursor}`);
});

test("P-PRF-18 P-ARC-14 nothing reaches the tail before its COMMIT, and a rolled-back row never does", async (t) => {
  const f = fixture(t);
  f.event("text", { messageId: "m1", text: "queued" });
  assert.equal(f.fromTail(0), null, "queued for the group commit: not in the tail");
  await setImmediate();
  assert.equal(f.fromTail(0)?.length, 1);
  let inside: string[] | null = [];
  f.engine.tx(() => {
    f.direct("text", { messageId: "m1", text: "in the transaction" });
    inside = f.fromTail(1);
  });
  assert.equal(inside, null, "inside its transaction the row is not in the tail");
  assert.equal(f.fromTail(1)?.length, 1);
  assert.throws(() => f.engine.tx(() => {
    f.direct("text", { messageId: "m1", text: "rolled back" });
    throw new Error("the work fails");
  }));
  assert.equal(f.fromTail(2), null, "the rolled-back row is not in the tail");
  f.direct("text", { messageId: "m1", text: "after the rollback" });
  assert.equal(f.store.journal.lastSeq("thread-1"), 3);
  for (let cursor = 0; cursor < 3; cursor++) assert.deepEqual(f.fromTail(cursor), f.fromJournal(cursor), `cursor ${cursor}`);
});

test("P-PRF-18 P-STO-17 a metadata-only thread's pages always come from the journal (volatile payloads stay in volatile capture)", async (t) => {
  const f = fixture(t, "metadata-only");
  f.event("text", { messageId: "m1", text: "volatile" });
  await setImmediate();
  f.direct("turn_state", { state: "running" });
  assert.equal(f.fromTail(0), null);
  assert.deepEqual(f.fromTail(1), f.fromJournal(1), "a payload-free row after it may be served");
});
