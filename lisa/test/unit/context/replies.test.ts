import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { REPLY_UNAVAILABLE } from "../../../src/context/block.ts";
import { ALICE, BOB, OTHER_ROOM, build, fakeHistory, messages, msg, other, reply } from "./fixtures.ts";

function replyOf(block: string, eventId: string): string | null {
  return messages(block).find((m) => m.attrs["event_id"] === eventId)?.reply ?? null;
}

describe("reply relationships", () => {
  test("refers to a target inside the context by its sequence number", async () => {
    const timeline = [msg("a", ALICE, "question", 1), msg("b", BOB, "noise", 2), reply("i", BOB, "> <@alice:example.test> question\n\n@Lisa answer this", 3, "a")];
    const context = await build(fakeHistory({ timeline }), timeline[2]!);
    assert.equal(replyOf(context.block, "$i"), '<reply_to sequence="1" event_id="$a" />');
    assert.equal(messages(context.block)[2]?.body, "@Lisa answer this");
  });
  test("fetches an older target by id and shows a short escaped excerpt as metadata", async () => {
    const old = msg("old", ALICE, "an <old> remark", -500);
    const timeline = [msg("a", BOB, "recent", 1), reply("i", BOB, "@Lisa about that", 2, "old")];
    const history = fakeHistory({ timeline, extra: [old] });
    const context = await build(history, timeline[1]!);
    assert.equal(replyOf(context.block, "$i"), '<reply_to event_id="$old" excerpt_author="@alice:example.test">an &lt;old&gt; remark</reply_to>');
    assert.ok(history.calls.includes("event $old"));
    assert.equal(context.messageCount, 2);
  });
  test("uses an excerpt from fetched but unselected history without a network call", async () => {
    const timeline = [msg("a", ALICE, "early point", 1), msg("b", BOB, "filler", 2), reply("i", BOB, "@Lisa re", 3, "a")];
    const history = fakeHistory({ timeline });
    const context = await build(history, timeline[2]!, { max_events: 2 });
    assert.match(replyOf(context.block, "$i") ?? "", /^<reply_to event_id="\$a" excerpt_author="@alice:example.test">early point<\/reply_to>$/);
    assert.equal(history.calls.filter((c) => c.startsWith("event")).length, 0);
  });
  test("follows reply chains only up to max_reply_depth", async () => {
    const extra = [reply("x1", ALICE, "one", -30, "x2"), reply("x2", BOB, "two", -40, "x3"), reply("x3", ALICE, "three", -50, "x4"), msg("x4", BOB, "four", -60)];
    const timeline = [reply("i", BOB, "@Lisa", 1, "x1")];
    const history = fakeHistory({ timeline, extra });
    const context = await build(history, timeline[0]!, { max_reply_depth: 2 });
    const meta = replyOf(context.block, "$i") ?? "";
    assert.match(meta, />one\n<reply_to event_id="\$x2" [^>]*>two\n<reply_to event_id="\$x3" \/><\/reply_to><\/reply_to>$/);
    assert.deepEqual(history.calls.filter((c) => c.startsWith("event")), ["event $x1", "event $x2"]);
  });
  test("does not fetch reply targets when max_reply_depth is zero", async () => {
    const timeline = [reply("i", BOB, "@Lisa", 1, "gone")];
    const history = fakeHistory({ timeline, extra: [msg("gone", ALICE, "older", -10)] });
    const context = await build(history, timeline[0]!, { max_reply_depth: 0 });
    assert.equal(replyOf(context.block, "$i"), '<reply_to event_id="$gone" />');
    assert.equal(history.calls.filter((c) => c.startsWith("event")).length, 0);
  });
  test("stops reply cycles with a visited set", async () => {
    const extra = [reply("p", ALICE, "ping", -20, "q"), reply("q", BOB, "pong", -10, "p")];
    const timeline = [reply("i", BOB, "@Lisa", 1, "p")];
    const history = fakeHistory({ timeline, extra });
    const context = await build(history, timeline[0]!, { max_reply_depth: 10 });
    assert.match(replyOf(context.block, "$i") ?? "", /ping\n<reply_to event_id="\$q" [^>]*>pong\n<reply_to event_id="\$p" \/><\/reply_to><\/reply_to>$/);
    assert.deepEqual(history.calls.filter((c) => c.startsWith("event")), ["event $p", "event $q"]);
  });
  for (const [name, extra] of [
    ["missing", []],
    ["redacted", [{ ...msg("t", ALICE, "", -5), content: {}, unsigned: { redacted_because: {} } }]],
    ["malformed", [{ ...msg("t", ALICE, "", -5), content: { msgtype: "m.text", body: 42 } }]],
    ["non-message", [other("t", "m.reaction", ALICE, -5, { "m.relates_to": { rel_type: "m.annotation", event_id: "$i", key: "x" } })]],
    ["cross-room", [{ ...msg("t", ALICE, "elsewhere", -5), room_id: OTHER_ROOM }]],
  ] as const) {
    test(`marks a ${name} target as reply target unavailable`, async () => {
      const timeline = [reply("i", BOB, "@Lisa", 1, "t")];
      const context = await build(fakeHistory({ timeline, extra }), timeline[0]!);
      assert.equal(replyOf(context.block, "$i"), `<reply_to event_id="$t" status="unavailable">${REPLY_UNAVAILABLE}</reply_to>`);
      assert.doesNotMatch(context.block, /elsewhere/);
    });
  }
  test("takes reply excerpts only from the remaining character budget", async () => {
    const extra = [msg("t", ALICE, "e".repeat(300), -5)];
    const timeline = [reply("i", BOB, "x".repeat(480), 1, "t")];
    const context = await build(fakeHistory({ timeline, extra }), timeline[0]!, { max_characters: 500 });
    const excerpt = /excerpt_author="[^"]*">(e+…)</.exec(replyOf(context.block, "$i") ?? "")?.[1] ?? "";
    assert.equal([...excerpt].length, 20);
    assert.equal(context.characters, 500);
  });
  test("omits the excerpt but keeps the relation when no budget remains", async () => {
    const timeline = [reply("i", BOB, "x".repeat(495), 1, "t")];
    const context = await build(fakeHistory({ timeline, extra: [msg("t", ALICE, "target", -5)] }), timeline[0]!, { max_characters: 500 });
    assert.equal(replyOf(context.block, "$i"), '<reply_to event_id="$t" />');
  });
  test("does not treat a thread fallback reply as a reply relationship", async () => {
    const timeline = [msg("root", ALICE, "root", 1), msg("i", BOB, "@Lisa", 2, { "m.relates_to": { rel_type: "m.thread", event_id: "$root", is_falling_back: true, "m.in_reply_to": { event_id: "$root" } } })];
    const context = await build(fakeHistory({ timeline }), timeline[1]!);
    assert.equal(replyOf(context.block, "$i"), null);
  });
});
