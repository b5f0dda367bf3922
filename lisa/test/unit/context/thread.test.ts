import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { MAX_THREAD_PAGES } from "../../../src/context/thread.ts";
import { REDACTED_BODY } from "../../../src/context/normalise.ts";
import { err } from "../../../src/errors.ts";
import { ALICE, BOB, OTHER_ROOM, build, matrixError, edit, fakeHistory, inThread, member, messageIds, messages, msg, recordingLogger } from "./fixtures.ts";

function threadInvocation(id: string, minute: number, root: string) {
  return inThread(id, BOB, "@Lisa what do you think?", minute, root);
}

describe("thread context", () => {
  const timeline = [
    msg("before", ALICE, "main timeline before the root", 0),
    msg("root", ALICE, "Shall we use SQLite?", 1),
    msg("root2", BOB, "another thread root", 2),
    inThread("t1", BOB, "yes, WAL mode", 3, "root"),
    inThread("o1", ALICE, "other thread reply", 4, "root2"),
    msg("main", BOB, "unrelated main timeline chat", 5),
    inThread("t2", ALICE, "and backups?", 6, "root"),
    threadInvocation("i", 7, "root"),
    inThread("t3", ALICE, "later thread reply", 8, "root"),
  ];
  const invocation = timeline[7]!;

  test("contains the thread root and earlier thread messages only", async () => {
    const context = await build(fakeHistory({ timeline, state: [member(ALICE, "Alice")] }), invocation);
    assert.deepEqual(messageIds(context.block), ["$root", "$t1", "$t2", "$i"]);
    assert.deepEqual(context.thread, { rootId: "$root" });
    assert.match(context.block, /^<room_context room_id="!room:example.test" thread_root="\$root">/);
    assert.equal(messages(context.block)[0]?.attrs["thread_root"], "true");
    assert.equal(messages(context.block)[0]?.attrs["author_name"], "Alice");
    assert.doesNotMatch(context.block, /main timeline|other thread|later thread/);
  });
  test("fetches the root by id and the thread through thread relations", async () => {
    const history = fakeHistory({ timeline });
    await build(history, invocation, { max_events: 10 });
    assert.ok(history.calls.includes("event $root"));
    assert.ok(history.calls.includes("thread $root - 21"));
    assert.equal(history.calls.filter((c) => c.startsWith("messages")).length, 0);
  });
  test("pages backwards through a long thread within the page bound", async () => {
    const replies = Array.from({ length: 30 }, (_, i) => inThread(`r${i}`, i % 2 === 0 ? ALICE : BOB, `reply ${i}`, 10 + i, "root"));
    const later = Array.from({ length: 10 }, (_, i) => inThread(`z${i}`, ALICE, `later ${i}`, 100 + i, "root"));
    const long = [msg("root", ALICE, "root", 1), ...replies, threadInvocation("i", 50, "root"), ...later];
    const history = fakeHistory({ timeline: long });
    const context = await build(history, long[31]!, { max_events: 4 });
    assert.deepEqual(messageIds(context.block), ["$root", "$r28", "$r29", "$i"]);
    const pages = history.calls.filter((c) => c.startsWith("thread")).length;
    assert.ok(pages >= 2 && pages <= MAX_THREAD_PAGES, `pages ${pages}`);
  });
  test("reserves the root under the event budget before older thread replies", async () => {
    const replies = Array.from({ length: 6 }, (_, i) => inThread(`r${i}`, BOB, `reply ${i}`, 10 + i, "root"));
    const long = [msg("root", ALICE, "root", 1), ...replies, threadInvocation("i", 50, "root")];
    const context = await build(fakeHistory({ timeline: long }), long.at(-1)!, { max_events: 3 });
    assert.deepEqual(messageIds(context.block), ["$root", "$r5", "$i"]);
  });
  test("applies a bundled edit of a thread message by its sender", async () => {
    const t1 = inThread("t1", BOB, "tpyo", 3, "root");
    const edited = { ...t1, unsigned: { "m.relations": { "m.replace": edit("e", BOB, "t1", "typo fixed", 4) } } };
    const context = await build(fakeHistory({ timeline: [msg("root", ALICE, "r", 1), edited, threadInvocation("i", 7, "root")] }), threadInvocation("i", 7, "root"));
    assert.equal(messages(context.block)[1]?.body, "typo fixed");
  });
  test("shows a redacted thread root as [message redacted]", async () => {
    const root = { ...msg("root", ALICE, "", 1), content: {}, unsigned: { redacted_because: { type: "m.room.redaction" } } };
    const context = await build(fakeHistory({ timeline: [root, inThread("t1", BOB, "reply", 2, "root"), threadInvocation("i", 3, "root")] }), threadInvocation("i", 3, "root"));
    assert.deepEqual(messages(context.block).map((m) => m.body), [REDACTED_BODY, "reply", "@Lisa what do you think?"]);
  });
  test("omits a missing thread root with a note and still answers from the thread", async () => {
    const log = recordingLogger();
    const thread = [inThread("t1", BOB, "reply", 2, "root"), threadInvocation("i", 3, "root")];
    const context = await build(fakeHistory({ timeline: thread }), thread[1]!, {}, log);
    assert.deepEqual(messageIds(context.block), ["$t1", "$i"]);
    assert.match(context.block, /<thread_root event_id="\$root" status="unavailable" \/>/);
    assert.ok(log.lines.some((l) => l.event === "context_thread_root_unavailable"));
  });
  test("omits a thread root from another room", async () => {
    const foreignRoot = { ...msg("root", ALICE, "foreign secret", 1), room_id: OTHER_ROOM };
    const thread = [foreignRoot, inThread("t1", BOB, "reply", 2, "root"), threadInvocation("i", 3, "root")];
    const context = await build(fakeHistory({ timeline: thread }), thread[2]!);
    assert.doesNotMatch(context.block, /foreign secret/);
    assert.match(context.block, /status="unavailable"/);
  });
  test("falls back to the root and invocation when thread relations fail", async () => {
    const history = fakeHistory({ timeline });
    const failing = { ...history, threadBackwards: async () => err(matrixError("matrix_server_error")) };
    const log = recordingLogger();
    const context = await build(failing, invocation, {}, log);
    assert.deepEqual(messageIds(context.block), ["$root", "$i"]);
    assert.ok(log.lines.some((l) => l.event === "context_thread_unavailable"));
  });
});
