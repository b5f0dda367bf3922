import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  ALICE, BOB, CAROL, createWorld, lisaReplies, OUTSIDE, repliedTo, ROOM1, ROOM2, ROOM3, startInProcess, until, waitForBaseline,
  type InProcessLisa, type World,
} from "../../support/lisa-harness.ts";
import type { RecordedRequest } from "../../support/scripted-llm.ts";

function relation(event: { readonly content: Readonly<Record<string, unknown>> }): Record<string, unknown> {
  return (event.content["m.relates_to"] ?? {}) as Record<string, unknown>;
}

function contextOf(request: RecordedRequest | undefined): string {
  const messages = (request?.body as { messages?: Array<{ role: string; content: string }> } | undefined)?.messages ?? [];
  return messages.find((m) => m.role === "user")?.content ?? "";
}

for (const profile of ["synapse", "continuwuity", "dendrite"] as const) {
  describe(`threads (${profile})`, () => {
    let world: World;
    let lisa: InProcessLisa;

    before(async () => {
      world = await createWorld({ profile });
      lisa = startInProcess(world);
      await waitForBaseline(lisa.store);
    });
    after(async () => {
      await lisa.stop();
      await world.close();
    });

    test("a mention inside a thread is answered inside that thread with the right relation", async () => {
      const root = world.hs.sendText(ROOM1, ALICE, "Thread about gardening");
      world.hs.sendText(ROOM1, BOB, "main timeline chatter about football");
      world.hs.threadReply(ROOM1, CAROL, root, "tomatoes need sun");
      const otherRoot = world.hs.sendText(ROOM1, BOB, "Another thread about cars");
      world.hs.threadReply(ROOM1, BOB, otherRoot, "diesel engines are loud");
      const invoking = world.hs.threadReply(ROOM1, BOB, root, "Lisa, how much water do they need?");
      await until(() => lisaReplies(world, ROOM1).length === 1, 15_000, "Lisa's thread reply");
      const reply = lisaReplies(world, ROOM1)[0]!;
      const rel = relation(reply);
      assert.equal(rel["rel_type"], "m.thread");
      assert.equal(rel["event_id"], root);
      assert.equal(rel["is_falling_back"], false);
      assert.equal(repliedTo(reply), invoking);

      const context = contextOf(world.llm.requests.at(-1));
      assert.match(context, new RegExp(`thread_root="\\${root}"`));
      assert.match(context, /Thread about gardening/);
      assert.match(context, /tomatoes need sun/);
      assert.doesNotMatch(context, /football/, "nothing from the main timeline");
      assert.doesNotMatch(context, /diesel|cars/, "nothing from another thread");
    });

    test("a follow-up in a thread where Lisa spoke last is answered in the thread", async () => {
      const root = world.hs.sendText(ROOM2, ALICE, "Lisa, start a thread?");
      await until(() => lisaReplies(world, ROOM2).length === 1, 15_000, "first reply");
      const first = lisaReplies(world, ROOM2)[0]!;
      // Lisa answered a main-timeline message, so she replied in the main timeline.
      assert.equal(relation(first)["rel_type"], undefined);
      const threadRoot = world.hs.sendText(ROOM2, BOB, "Let's discuss Lisa's idea in a thread, Lisa?");
      await until(() => lisaReplies(world, ROOM2).length === 2, 15_000, "second reply");
      world.hs.threadReply(ROOM2, CAROL, threadRoot, "@Lisa what about winter?");
      await until(() => lisaReplies(world, ROOM2).length === 3, 15_000, "thread reply");
      const inThread = lisaReplies(world, ROOM2)[2]!;
      assert.equal(relation(inThread)["event_id"], threadRoot);
      // Lisa spoke last in the thread: a follow-up without a mention is a reply to her (client fallback).
      const followUp = world.hs.threadReply(ROOM2, ALICE, threadRoot, "and in spring?");
      await until(() => lisaReplies(world, ROOM2).length === 4, 15_000, "follow-up reply");
      const answer = lisaReplies(world, ROOM2)[3]!;
      assert.equal(relation(answer)["rel_type"], "m.thread");
      assert.equal(relation(answer)["event_id"], threadRoot);
      assert.equal(repliedTo(answer), followUp);
    });

    test("a follow-up after another member's thread message (no mention) is not answered", async () => {
      const root = world.hs.sendText(ROOM3, ALICE, "A thread, Lisa?");
      await until(() => lisaReplies(world, ROOM3).length === 1, 15_000, "root reply");
      const bobAsks = world.hs.threadReply(ROOM3, BOB, root, "Lisa, thoughts?");
      await until(() => lisaReplies(world, ROOM3).length === 2, 15_000, "thread reply");
      // Carol answers Bob (a real reply, not a fallback): another member now wrote last.
      world.hs.send(ROOM3, CAROL, {
        msgtype: "m.text", body: "I disagree with everyone",
        "m.relates_to": { rel_type: "m.thread", event_id: root, is_falling_back: false, "m.in_reply_to": { event_id: bobAsks } },
      });
      // Alice's follow-up falls back to Carol's message: not a reply to Lisa.
      world.hs.threadReply(ROOM3, ALICE, root, "why?");
      const marker = world.hs.sendText(ROOM3, BOB, "Lisa, last one in the main timeline");
      await until(() => lisaReplies(world, ROOM3).length === 3, 15_000, "marker reply");
      assert.equal(repliedTo(lisaReplies(world, ROOM3)[2]!), marker, "the unmentioned thread follow-up got no reply");
      const mainContext = contextOf(world.llm.requests.at(-1));
      assert.doesNotMatch(mainContext, /I disagree with everyone|Lisa, thoughts\?/, "main-timeline context leaves out thread-internal messages");
      assert.match(mainContext, /A thread, Lisa\?/, "thread roots stay in the main timeline");
    });

    test("a thread whose root was redacted is handled without crashing", async () => {
      const root = world.hs.sendText(ROOM1, ALICE, "secret root text");
      world.hs.threadReply(ROOM1, BOB, root, "inside the thread");
      world.hs.redact(ROOM1, ALICE, root);
      const before = lisaReplies(world, ROOM1).length;
      const invoking = world.hs.threadReply(ROOM1, CAROL, root, "Lisa, still there?");
      await until(() => lisaReplies(world, ROOM1).length === before + 1, 15_000, "reply in redacted thread");
      const reply = lisaReplies(world, ROOM1).at(-1)!;
      assert.equal(repliedTo(reply), invoking);
      assert.equal(relation(reply)["event_id"], root);
      const context = contextOf(world.llm.requests.at(-1));
      assert.doesNotMatch(context, /secret root text/);
      assert.match(context, /\[message redacted\]/);
    });

    test("a thread root outside the allowed room is never used", async () => {
      const foreignRoot = world.hs.sendText(OUTSIDE, ALICE, "outside root");
      const before = lisaReplies(world, ROOM2).length;
      // A forged relation: ROOM2 message claiming a thread root that lives in another room.
      const invoking = world.hs.sendText(ROOM2, BOB, "Lisa, forged thread?", {
        "m.relates_to": { rel_type: "m.thread", event_id: foreignRoot, is_falling_back: true, "m.in_reply_to": { event_id: foreignRoot } },
      });
      await until(() => lisaReplies(world, ROOM2).length === before + 1, 15_000, "reply to forged thread");
      assert.equal(repliedTo(lisaReplies(world, ROOM2).at(-1)!), invoking);
      assert.doesNotMatch(contextOf(world.llm.requests.at(-1)), /outside root/);
      assert.equal(lisaReplies(world, OUTSIDE).length, 0);
    });
  });
}
