// Which messages Lisa answers, against a real Synapse with Lisa as a child
// process: history, mentions, replies, non-invocations and restarts.
import assert from "node:assert/strict";
import { after, afterEach, before, describe, test } from "node:test";
import {
  type AcceptanceWorld,
  assertNoCanary,
  assertRepliesExactly,
  barrier,
  bodyOf,
  groupByTarget,
  inReplyTo,
  LISA_ID,
  lisaMessages,
  SETUP_MARK,
  startAcceptanceWorld,
  waitForReplies,
  waitForReply,
} from "../support/acceptance-world.ts";
import { relatesTo, type TimelineEvent } from "../support/synapse.ts";
import { stopAndReadOutput } from "./output.ts";

const ROOMS = ["history", "mention", "replies", "ignored", "restart"] as const;

describe("Lisa answers exactly the invocations (real Synapse, child process)", () => {
  let world: AcceptanceWorld;
  let history: string;
  const historyEvents: string[] = [];

  before(async () => {
    world = await startAcceptanceWorld({ rooms: ROOMS, outsideRooms: ["outside"] });
    history = world.room("history");
    // Earlier mentions and a reply to Lisa, all before her first start.
    const lisaEarlier = await world.sendAsLisa(history, "Hello, I am Lisa and I arrived early.");
    historyEvents.push(await world.alice.sendMention(history, LISA_ID, "Lisa", "what did you think of the film?"));
    historyEvents.push(await world.bob.sendText(history, "Lisa, are you awake?"));
    const parent = await world.alice.getEvent(history, lisaEarlier);
    historyEvents.push(await world.bob.sendReply(history, parent, "Welcome!", { mentions: {} }));
    world.lisa.start();
    await world.lisa.waitForLog("sync_baseline");
  });

  afterEach(async () => {
    await assertNoCanary(world);
  });

  after(async () => {
    await world?.close();
  });

  test("a first start in a room with earlier mentions answers none of them", async () => {
    const barrierId = await barrier(world, history);
    await assertRepliesExactly(world, history, [barrierId]);
    for (const id of historyEvents) assert.equal(groupByTarget(await lisaMessages(world, history)).has(id), false);
  });

  test("a structured mention and a plain-text alias each get exactly one rich reply to the invoking event", async () => {
    const room = world.room("mention");
    const structured = await world.alice.sendMention(room, LISA_ID, "Lisa", "what is the capital of France?");
    assertRichReply(await waitForReply(world, room, structured), structured, world.alice.userId);
    const plain = await world.bob.sendText(room, "hey lisa, tell me a joke");
    assertRichReply(await waitForReply(world, room, plain), plain, world.bob.userId);
    const barrierId = await barrier(world, room);
    await assertRepliesExactly(world, room, [structured, plain, barrierId]);
  });

  test("a reply to Lisa without a mention gets exactly one reply; a reply to another member gets none", async () => {
    const room = world.room("replies");
    const invoking = await world.alice.sendMention(room, LISA_ID, "Lisa", "name a colour");
    const lisaReply = await waitForReply(world, room, invoking);
    const toLisa = await world.bob.sendReply(room, lisaReply, "Why that one?", { mentions: {} });
    assertRichReply(await waitForReply(world, room, toLisa), toLisa, world.bob.userId);
    const bobSays = await world.bob.sendText(room, "I like green myself.");
    await world.alice.sendReply(room, await world.alice.getEvent(room, bobSays), "Green is nice.", { mentions: {} });
    const barrierId = await barrier(world, room);
    await assertRepliesExactly(world, room, [invoking, toLisa, barrierId]);
  });

  test("an edit, a reaction, a redaction, a membership change, a notice, Lisa's own message and an outside room get none", async () => {
    const room = world.room("ignored");
    const outside = world.room("outside");
    const invoking = await world.alice.sendMention(room, LISA_ID, "Lisa", "what is two plus two?");
    await waitForReply(world, room, invoking);
    await world.alice.sendEdit(room, invoking, "Lisa: what is three plus three?", { mentions: { user_ids: [LISA_ID] } });
    await world.bob.react(room, invoking, "👍");
    const typo = await world.bob.sendText(room, "a message with a typo");
    await world.bob.redact(room, typo, "typo");
    await world.alice.redact(room, invoking, "answered already");
    await world.carol.join(room);
    await world.carol.leave(room);
    await world.alice.sendNotice(room, "Lisa, this is only a notice");
    await world.alice.sendMessage(room, { msgtype: "m.notice", body: "Lisa: notice", "m.mentions": { user_ids: [LISA_ID] } });
    await world.lisaSetup.sendMessage(room, { msgtype: "m.text", body: "Lisa, talking to myself", "m.mentions": { user_ids: [LISA_ID] }, [SETUP_MARK]: true });
    await world.alice.sendMention(outside, LISA_ID, "Lisa", "are you listening in here?");
    await world.bob.sendText(outside, "Lisa, hello?");
    const barrierId = await barrier(world, room);
    await assertRepliesExactly(world, room, [invoking, barrierId]);
    assert.deepEqual(await lisaMessages(world, outside), [], "nothing in the room outside the allowlist");
  });

  test("a restart answers nothing twice, and mentions sent while Lisa was stopped are each answered once", async () => {
    const room = world.room("restart");
    const first = await world.alice.sendMention(room, LISA_ID, "Lisa", "first question before the restart");
    await waitForReply(world, room, first);
    assert.deepEqual(await world.lisa.stop(), { code: 0, signal: null }, "SIGTERM is a clean shutdown");
    const whileStopped = [
      await world.alice.sendMention(room, LISA_ID, "Lisa", "are you back yet?"),
      await world.bob.sendText(room, "Lisa, what did I miss?"),
      await world.alice.sendText(room, "Lisa, one more while you were away"),
    ];
    const run = world.lisa.start();
    await waitForReplies(world, room, whileStopped);
    const barrierId = await barrier(world, room);
    await assertRepliesExactly(world, room, [first, ...whileStopped, barrierId]);
    assert.equal(world.lisa.count("sync_baseline"), 1, "the restart resumed from the saved cursor without a new baseline");
    assert.equal(world.lisa.count("sync_baseline", run), 0);
  });

  test("across every room no invocation was answered twice and nothing else was answered", async () => {
    for (const roomId of world.allowedRoomIds) {
      const groups = groupByTarget(await lisaMessages(world, roomId));
      for (const [target, replies] of groups) {
        assert.notEqual(target, "", `every message of Lisa in ${roomId} is a reply`);
        assert.equal(replies.length, 1, `one reply to ${target}`);
        assert.ok(!historyEvents.includes(target), "no reply to history");
      }
    }
    await stopAndReadOutput(world);
    await assertNoCanary(world);
  });
});

function assertRichReply(reply: TimelineEvent, invokingId: string, invoker: string): void {
  assert.equal(inReplyTo(reply), invokingId, "the reply targets the invoking event");
  assert.equal(relatesTo(reply)?.["rel_type"], undefined, "not in a thread");
  assert.equal(reply.content["msgtype"], "m.text");
  assert.equal(reply.content["format"], "org.matrix.custom.html");
  assert.match(String(reply.content["formatted_body"]), /^<mx-reply><blockquote>/, "HTML reply fallback");
  assert.ok(bodyOf(reply).startsWith(`> <${invoker}> `), "plain reply fallback");
  assert.deepEqual(reply.content["m.mentions"], { user_ids: [invoker] }, "the reply mentions the invoker");
}
