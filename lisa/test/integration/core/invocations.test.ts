// Which events invoke Lisa and which never do, end
// to end against the fake homeserver in both profiles. Negative cases are
// proven with a later "sentinel" mention: rooms are FIFO, so once it is
// answered every earlier event of its room has been decided.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { CANARY } from "../../support/config.ts";
import {
  ALICE, BOB, CAROL, createWorld, LISA, lisaReplies, OUTSIDE, repliedTo, ROOM1, ROOM2, ROOM3, until, type InProcessLisa, type World,
} from "../../support/lisa-harness.ts";
import { traitsOf } from "../../support/fake-homeserver/traits.ts";
import { bodyOf, logRecords, PROFILES, repliesTo, settle, startLisa, waitForReply } from "./helpers.ts";

for (const profile of PROFILES) {
  describe(`invocations (${profile})`, () => {
    let world: World;
    let lisa: InProcessLisa;
    let history: string[] = [];

    before(async () => {
      world = await createWorld({ profile });
      history = [
        world.hs.sendText(ROOM1, ALICE, "Lisa, this question is history"),
        world.hs.sendText(ROOM2, BOB, "@lisa:localhost an old structured mention", { "m.mentions": { user_ids: [LISA] } }),
        world.hs.sendText(ROOM3, CAROL, "hey lisa, also old"),
      ];
      lisa = await startLisa(world);
    });
    after(async () => {
      await lisa.stop();
      await world.close();
    });

    const llmRequests = (): number => world.llm.requests.length;

    test("the first sync ignores historical mentions", async () => {
      for (const room of [ROOM1, ROOM2, ROOM3]) await settle(world, room);
      for (const id of history) {
        assert.equal(repliesTo(world, ROOM1, id).length + repliesTo(world, ROOM2, id).length + repliesTo(world, ROOM3, id).length, 0);
        assert.equal(lisa.store.invocation(id), null, "history never enters the ledger");
      }
      assert.equal(logRecords(world, "sync_baseline").length, 1);
    });

    test("an incremental mention gets exactly one rich reply to the invoking event that mentions the invoker", async () => {
      const invoking = world.hs.sendText(ROOM1, BOB, "Hey Lisa, what do you think about tea?");
      const reply = await waitForReply(world, ROOM1, invoking);
      await settle(world, ROOM1);
      assert.equal(repliesTo(world, ROOM1, invoking).length, 1);
      assert.equal(reply.type, "m.room.message");
      assert.equal(reply.content["msgtype"], "m.text");
      assert.equal(repliedTo(reply), invoking);
      assert.deepEqual((reply.content["m.mentions"] as { user_ids: string[] }).user_ids, [BOB]);
      assert.match(bodyOf(reply), /Indeed, answer number \d+/);
      const row = lisa.store.invocation(invoking);
      assert.equal(row?.status, "sent");
      assert.equal(row?.sentEventId, reply.event_id);
      assert.equal(row?.rawEventJson, null, "content is cleared once sent");
    });

    test("a structured mention without any alias in the text gets one reply", async () => {
      const invoking = world.hs.sendText(ROOM2, ALICE, "could you summarise the thread?", { "m.mentions": { user_ids: [LISA] } });
      await waitForReply(world, ROOM2, invoking);
      await settle(world, ROOM2);
      assert.equal(repliesTo(world, ROOM2, invoking).length, 1);
    });

    test("a plain-text alias in any letter case gets one reply", async () => {
      const lower = world.hs.sendText(ROOM3, CAROL, "lisa: what is the capital of France?");
      const upper = world.hs.sendText(ROOM3, BOB, "Any ideas, LISA?");
      await waitForReply(world, ROOM3, lower);
      await waitForReply(world, ROOM3, upper);
      await settle(world, ROOM3);
      assert.equal(repliesTo(world, ROOM3, lower).length, 1);
      assert.equal(repliesTo(world, ROOM3, upper).length, 1);
    });

    test("several invocations in one sync response are all answered", async () => {
      await until(() => world.hs.activeSyncs === 1, 10_000, "Lisa long-polling");
      const before = logRecords(world, "sync_candidates").length;
      // Sent in one synchronous block: the fake builds its next response after this block, with all of them.
      const ids: [string, string][] = [
        [ROOM1, world.hs.sendText(ROOM1, ALICE, "Lisa, first of a batch")],
        [ROOM1, world.hs.sendText(ROOM1, BOB, "Lisa, second of a batch")],
        [ROOM2, world.hs.sendText(ROOM2, CAROL, "Lisa, third of a batch")],
        [ROOM3, world.hs.sendText(ROOM3, ALICE, "Lisa, fourth of a batch")],
      ];
      for (const [room, id] of ids) await waitForReply(world, room, id);
      for (const room of [ROOM1, ROOM2, ROOM3]) await settle(world, room);
      for (const [room, id] of ids) assert.equal(repliesTo(world, room, id).length, 1);
      const batch = logRecords(world, "sync_candidates").slice(before).find((r) => r["inserted"] === 4);
      assert.ok(batch, "the four invocations arrived in one committed batch");
      assert.equal(batch["rooms"], 3);
    });

    test("a reply to Lisa without a mention gets one reply", async () => {
      const question = world.hs.sendText(ROOM1, ALICE, "Lisa, name a colour");
      const answer = await waitForReply(world, ROOM1, question);
      const followUp = world.hs.reply(ROOM1, ALICE, answer.event_id, "and another one?");
      await waitForReply(world, ROOM1, followUp);
      await settle(world, ROOM1);
      assert.equal(repliesTo(world, ROOM1, followUp).length, 1);
      assert.equal(repliesTo(world, ROOM1, question).length, 1);
    });

    test("a reply to an older Lisa message unknown to the ledger is verified with the server and answered", async () => {
      const older = world.hs.sendText(ROOM2, LISA, "An older message of mine, from before this database.");
      const followUp = world.hs.reply(ROOM2, CAROL, older, "what did you mean by that?");
      await waitForReply(world, ROOM2, followUp);
      await settle(world, ROOM2);
      assert.equal(repliesTo(world, ROOM2, followUp).length, 1);
      assert.ok(world.hs.requests("event").length > 0, "the reply target was fetched from the server");
    });

    test("a reply to another member without a mention gets no reply", async () => {
      const llmBefore = llmRequests();
      const statement = world.hs.sendText(ROOM1, ALICE, "I had pasta for lunch");
      const reply = world.hs.reply(ROOM1, BOB, statement, "sounds tasty");
      await settle(world, ROOM1);
      assert.equal(repliesTo(world, ROOM1, reply).length, 0);
      assert.equal(repliesTo(world, ROOM1, statement).length, 0);
      assert.equal(lisa.store.invocation(reply)?.status, "ignored");
      assert.equal(lisa.store.invocation(reply)?.lastErrorCode, "reply_to_other");
      assert.equal(llmRequests(), llmBefore + 1, "only the sentinel reached the LLM");
    });

    test("a reply in one room to Lisa's message from another room gets no reply", async () => {
      const question = world.hs.sendText(ROOM1, ALICE, "Lisa, one more thing");
      const answer = await waitForReply(world, ROOM1, question);
      const crossRoom = world.hs.reply(ROOM2, BOB, answer.event_id, "replying across rooms");
      await settle(world, ROOM2);
      assert.equal(repliesTo(world, ROOM2, crossRoom).length, 0);
      assert.equal(lisa.store.invocation(crossRoom)?.lastErrorCode, "reply_to_other");
    });

    test("an ordinary message gets no reply and no LLM request", async () => {
      const llmBefore = llmRequests();
      const ordinary = world.hs.sendText(ROOM2, CAROL, "just chatting about the weekend");
      await settle(world, ROOM2);
      assert.equal(repliesTo(world, ROOM2, ordinary).length, 0);
      assert.equal(lisa.store.invocation(ordinary), null, "not even a candidate");
      assert.equal(llmRequests(), llmBefore + 1);
    });

    test("a mention in a room outside the allowlist gets no reply, no typing and no LLM request, even where it arrives in her sync", async () => {
      const llmBefore = llmRequests();
      const outside = world.hs.sendText(OUTSIDE, ALICE, "Lisa, please answer here?", { "m.mentions": { user_ids: [LISA] } });
      await settle(world, ROOM1);
      // Continuwuity and Dendrite ignore the filter's room list: the local allowlist is the only guard.
      assert.equal(world.hs.roomsSyncedTo(LISA).has(OUTSIDE), !traitsOf(profile).appliesFilterRoomList, "the outside room in Lisa's sync");
      assert.equal(lisaReplies(world, OUTSIDE).length, 0);
      assert.equal(world.hs.typingHistory(OUTSIDE).length, 0);
      assert.equal(lisa.store.invocation(outside), null);
      assert.equal(llmRequests(), llmBefore + 1);
    });

    test("an edit of an invocation does not create another reply", async () => {
      const invoking = world.hs.sendText(ROOM3, BOB, "Lisa, how tall is Everest?");
      await waitForReply(world, ROOM3, invoking);
      const edit = world.hs.edit(ROOM3, BOB, invoking, "Lisa, how tall is K2?");
      await settle(world, ROOM3);
      assert.equal(repliesTo(world, ROOM3, invoking).length, 1);
      assert.equal(repliesTo(world, ROOM3, edit).length, 0);
      assert.equal(lisa.store.invocation(edit)?.lastErrorCode, "edit");
    });

    test("reactions, redactions, notices, membership changes and Lisa's own messages get no reply", async () => {
      const llmBefore = llmRequests();
      const plain = world.hs.sendText(ROOM3, ALICE, "nice weather today");
      const silent: string[] = [
        world.hs.react(ROOM3, BOB, plain, "Lisa"),
        world.hs.sendNotice(ROOM3, BOB, "Lisa, this is only a notice"),
        world.hs.setDisplayName(ROOM3, CAROL, "Lisa's friend"),
        world.hs.leave(ROOM3, CAROL),
        world.hs.join(ROOM3, CAROL, "Lisa fan"),
        world.hs.sendText(ROOM3, LISA, "Lisa here, talking about @lisa:localhost", { "m.mentions": { user_ids: [LISA] } }),
      ];
      // Redacted before Lisa's next sync (same synchronous block): only the redacted form is ever seen.
      const redacted = world.hs.sendText(ROOM3, BOB, "Lisa, forget I asked");
      silent.push(redacted, world.hs.redact(ROOM3, BOB, redacted));
      await settle(world, ROOM3);
      for (const id of silent) {
        assert.equal(repliesTo(world, ROOM3, id).length, 0, `no reply to ${id}`);
        assert.equal(lisa.store.invocation(id), null, `${id} is not a candidate`);
      }
      const ignoredNotice = world.logs.filter((line) => line.includes('"invocation_ignored"') && line.includes('"m.notice"'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      assert.equal(ignoredNotice.length, 1, "the notice naming Lisa is logged as ignored");
      assert.equal(ignoredNotice[0]?.["reason"], "not_text");
      assert.equal(llmRequests(), llmBefore + 1);
    });

    test("a mention whose server timestamp predates the baseline is ignored as history (before_baseline)", async () => {
      const replayed = world.hs.sendText(ROOM2, ALICE, "Lisa, a replayed old question", {}, { originServerTs: world.hs.now() - 3_600_000 });
      await settle(world, ROOM2);
      assert.equal(repliesTo(world, ROOM2, replayed).length, 0);
      const row = lisa.store.invocation(replayed);
      assert.equal(row?.status, "ignored");
      assert.equal(row?.lastErrorCode, "before_baseline");
    });

    test("no secret canary appears in any room event or captured log line", () => {
      const everything = [
        ...world.logs,
        ...[ROOM1, ROOM2, ROOM3, OUTSIDE].flatMap((room) => world.hs.timeline(room).map((e) => JSON.stringify(e))),
      ].join("\n");
      for (const canary of Object.values(CANARY)) assert.ok(!everything.includes(canary), "canary leaked");
      assert.deepEqual(world.hs.internalErrors, []);
    });
  });
}
