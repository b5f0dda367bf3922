// Room concurrency end to end: a room is strictly
// serial, rooms overlap up to max_concurrent_rooms, idle rooms hold no
// permit, nothing queued is lost, and a stop mid-request cleans up. The
// scripted LLM measures overlap itself: every message carries a room tag and
// the script counts requests in flight per room and overall.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { ALICE, BOB, CAROL, LISA, lisaReplies, ROOM1, ROOM2, ROOM3, until } from "../../support/lisa-harness.ts";
import { jsonAnswer, type RecordedRequest, type ScriptedResponse } from "../../support/scripted-llm.ts";
import { peekLedger, PROFILES, repliesTo, replyTargets, scenario, waitForReply } from "./helpers.ts";

const ROOMS = [ROOM1, ROOM2, ROOM3] as const;
const TAGS = ["tag-one", "tag-two", "tag-three"] as const;
const SENDERS = [ALICE, BOB, CAROL] as const;

/** Which room an LLM request serves, from the room tag in its context. */
function roomTagOf(request: RecordedRequest): string {
  const tag = TAGS.find((t) => request.rawBody.includes(t));
  if (tag === undefined) throw new Error("LLM request without a room tag");
  return tag;
}

/** An LLM script that records how many requests are in flight, per room and overall. */
function overlapMeter(options: { holdMs: number; holdUntilInFlight?: number }) {
  const perRoom = new Map<string, number>();
  const meter = { inFlight: 0, maxInFlight: 0, maxPerRoom: 0, answered: 0, onRequest: (_tag: string): void => undefined };
  const script = async (request: RecordedRequest, index: number): Promise<ScriptedResponse> => {
    const tag = roomTagOf(request);
    meter.onRequest(tag);
    perRoom.set(tag, (perRoom.get(tag) ?? 0) + 1);
    meter.inFlight += 1;
    meter.maxInFlight = Math.max(meter.maxInFlight, meter.inFlight);
    meter.maxPerRoom = Math.max(meter.maxPerRoom, perRoom.get(tag) ?? 0);
    try {
      // Optionally hold until the expected overlap is reached (bounded, so a
      // broken limit shows up as a wrong maximum rather than a hang; generous,
      // so a loaded machine still gets the other room's request here in time).
      const holdDeadline = Date.now() + 15_000;
      while (options.holdUntilInFlight !== undefined && meter.maxInFlight < options.holdUntilInFlight && Date.now() < holdDeadline) await delay(10);
      await delay(options.holdMs);
    } finally {
      meter.inFlight -= 1;
      perRoom.set(tag, (perRoom.get(tag) ?? 1) - 1);
    }
    meter.answered += 1;
    return jsonAnswer(`Indeed, reply-marker-${index}.`);
  };
  return { meter, script };
}

for (const profile of PROFILES) {
  describe(`room concurrency (${profile})`, () => {
    test("one room never overlaps itself, even while its first invocation waits on the LLM", async () => {
      const { meter, script } = overlapMeter({ holdMs: 150 });
      await scenario({ profile, llmScript: script }, async ({ world, start }) => {
        await start();
        // Serial means each reply exists before the room's next invocation starts.
        const repliesSeenAtRequest: number[] = [];
        meter.onRequest = (tag) => {
          if (tag === TAGS[0]) repliesSeenAtRequest.push(lisaReplies(world, ROOM1).length);
        };
        const room1 = [0, 1, 2, 3].map((i) => world.hs.sendText(ROOM1, SENDERS[i % 3]!, `Lisa, ${TAGS[0]} question ${i}`));
        const room2 = [0, 1].map((i) => world.hs.sendText(ROOM2, SENDERS[i % 3]!, `Lisa, ${TAGS[1]} question ${i}`));
        for (const id of room1) await waitForReply(world, ROOM1, id);
        for (const id of room2) await waitForReply(world, ROOM2, id);
        assert.equal(meter.maxPerRoom, 1, "a room never had two LLM requests in flight");
        assert.deepEqual(replyTargets(world, ROOM1), room1, "answered in order");
        assert.deepEqual(repliesSeenAtRequest, [0, 1, 2, 3]);
      });
    });

    test("rooms overlap up to max_concurrent_rooms and never beyond", async () => {
      const { meter, script } = overlapMeter({ holdMs: 100, holdUntilInFlight: 2 });
      await scenario({ profile, llmScript: script, config: { runtime: { max_concurrent_rooms: 2 } } }, async ({ world, start }) => {
        await start();
        const sent = ROOMS.flatMap((room, r) => [0, 1].map((i) => [room, world.hs.sendText(room, SENDERS[i]!, `Lisa, ${TAGS[r]} question ${i}`)] as const));
        for (const [room, id] of sent) await waitForReply(world, room, id);
        assert.equal(meter.maxInFlight, 2);
        assert.equal(meter.maxPerRoom, 1);
        for (const [room, id] of sent) assert.equal(repliesTo(world, room, id).length, 1);
      });
    });

    test("an idle room holds no permit: with one permit every room is still served in turn", async () => {
      const { meter, script } = overlapMeter({ holdMs: 0 });
      await scenario({ profile, llmScript: script, config: { runtime: { max_concurrent_rooms: 1 } } }, async ({ world, start }) => {
        await start();
        for (const [r, room] of ROOMS.entries()) {
          const statement = world.hs.sendText(room, BOB, `a plain statement ${TAGS[r]}`);
          world.hs.reply(room, CAROL, statement, `an ignored reply ${TAGS[r]}`);
          const id = world.hs.sendText(room, ALICE, `Lisa, ${TAGS[r]} question`);
          await waitForReply(world, room, id);
        }
        const again = world.hs.sendText(ROOM1, ALICE, `Lisa, ${TAGS[0]} once more`);
        await waitForReply(world, ROOM1, again);
        assert.equal(meter.maxInFlight, 1);
        assert.equal(meter.answered, 4);
      });
    });

    test("many invocations at once are all answered exactly once, in order per room", async () => {
      await scenario({ profile }, async ({ world, start }) => {
        await start();
        const perRoom = new Map<string, string[]>(ROOMS.map((room) => [room, []]));
        for (let i = 0; i < 45; i += 1) {
          const room = ROOMS[i % 3]!;
          perRoom.get(room)!.push(world.hs.sendText(room, SENDERS[i % 3]!, `Lisa, burst question ${i}`));
          if (i % 5 === 0) world.hs.sendText(room, BOB, `burst chatter ${i}`);
        }
        for (const [room, ids] of perRoom) await until(() => lisaReplies(world, room).length >= ids.length, 60_000, `all replies in ${room}`);
        for (const [room, ids] of perRoom) {
          for (const id of ids) await waitForReply(world, room, id);
          assert.deepEqual(replyTargets(world, room), ids);
        }
      });
    });

    test("a stop during an LLM request returns the lease to candidate and clears typing", async () => {
      const slow = (): ScriptedResponse => ({ ...jsonAnswer("too late"), delayMs: 60_000 });
      await scenario({ profile, llmScript: slow, config: { runtime: { shutdown_grace_seconds: 0 } } }, async ({ world, start }) => {
        const lisa = await start();
        const invoking = world.hs.sendText(ROOM2, ALICE, `Lisa, ${TAGS[1]} never mind`);
        await until(() => world.llm.requests.length === 1 && world.hs.isTyping(ROOM2, LISA), 15_000, "typing during the LLM request");
        assert.equal(await lisa.stop(), 0);
        assert.equal(world.hs.isTyping(ROOM2, LISA), false);
        assert.equal(world.hs.typingHistory(ROOM2).at(-1)?.typing, false);
        const row = peekLedger(world, (store) => store.invocation(invoking));
        assert.equal(row?.status, "candidate");
        assert.equal(row?.lastErrorCode, "shutdown");
        assert.equal(lisaReplies(world, ROOM2).length, 0);
      });
    });
  });
}
