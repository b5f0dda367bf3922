import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { traitsOf } from "../../support/fake-homeserver/traits.ts";
import { ALICE, BOB, LISA, lisaReplies, ROOM1, until } from "../../support/lisa-harness.ts";
import { jsonAnswer, type RecordedRequest, type ScriptedResponse } from "../../support/scripted-llm.ts";
import { gate, logRecords, peekLedger, PROFILES, repliesTo, scenario, settle, waitForReply } from "./helpers.ts";

function heldFirstAnswer(): { script: (request: RecordedRequest, index: number) => Promise<ScriptedResponse>; open(): void } {
  const held = gate();
  return {
    script: async (_request, index) => {
      if (index === 0) await held.wait();
      return jsonAnswer(`Indeed, answer ${index + 1}.`);
    },
    open: () => held.open(),
  };
}

for (const profile of PROFILES) {
  describe(`ledger edge cases (${profile})`, () => {
    test("a mention redacted before Lisa processes it gets no reply and its text never reaches the LLM", async () => {
      const held = heldFirstAnswer();
      await scenario({ profile, llmScript: held.script }, async ({ world, start }) => {
        await start();
        const first = world.hs.sendText(ROOM1, ALICE, "Lisa, first question");
        await until(() => world.llm.requests.length === 1, 15_000, "first LLM request");
        const doomed = world.hs.sendText(ROOM1, BOB, "Lisa, my secret second question");
        await until(() => peekLedger(world, (s) => s.invocation(doomed))?.status === "candidate", 15_000, "the candidate recorded");
        world.hs.redact(ROOM1, BOB, doomed);
        await until(() => peekLedger(world, (s) => s.invocation(doomed))?.status === "ignored", 15_000, "the redacted candidate retracted");
        assert.equal(peekLedger(world, (s) => s.invocation(doomed))?.lastErrorCode, "redacted");
        held.open();
        await waitForReply(world, ROOM1, first);
        await settle(world, ROOM1);
        assert.equal(repliesTo(world, ROOM1, doomed).length, 0);
        assert.ok(world.llm.requests.every((r) => !r.rawBody.includes("secret second question")));
        assert.ok(lisaReplies(world, ROOM1).every((e) => !JSON.stringify(e.content).includes("secret second question")));
      });
    });

    // Continuwuity never answers M_UNKNOWN_POS (it sends a full response instead; recovery.test.ts).
    if (!traitsOf(profile).unknownSinceGetsFullResponse) {
      test("invocations recorded before an M_UNKNOWN_POS reset are still answered after the new baseline", async () => {
        const held = heldFirstAnswer();
        await scenario({ profile, llmScript: held.script }, async ({ world, start }) => {
          await start();
          const first = world.hs.sendText(ROOM1, ALICE, "Lisa, first question");
          await until(() => world.llm.requests.length === 1, 15_000, "first LLM request");
          const queued = world.hs.sendText(ROOM1, BOB, "Lisa, queued question");
          await until(() => peekLedger(world, (s) => s.invocation(queued))?.status === "candidate", 15_000, "queued candidate");
          // Later room activity is a minute newer, so the new baseline anchor lies well after the queued mention.
          world.hs.setClockOffset(60_000);
          world.hs.failNext("sync", { kind: "unknownPos" });
          world.hs.sendText(ROOM1, ALICE, "just chatting");
          await until(() => logRecords(world, "sync_baseline").length === 2, 15_000, "the new baseline");
          held.open();
          await waitForReply(world, ROOM1, first);
          await waitForReply(world, ROOM1, queued);
          // The reply is visible in the room as soon as the homeserver accepts the PUT;
          // Lisa records `sent` only after reading the response, so wait for that commit.
          await until(() => peekLedger(world, (s) => s.invocation(queued))?.status === "sent", 15_000, "the queued reply recorded as sent");
          assert.equal(peekLedger(world, (s) => s.invocation(queued))?.status, "sent");
        });
      });
    }

    test("after Lisa leaves and rejoins a room, what was said while she was away is not answered", async () => {
      await scenario({ profile }, async ({ world, start }) => {
        await start();
        await settle(world, ROOM1);
        world.hs.leave(ROOM1, LISA);
        const away = world.hs.sendText(ROOM1, ALICE, "Lisa, did you see this while you were away?");
        world.hs.join(ROOM1, LISA, "Lisa");
        await settle(world, ROOM1, BOB);
        assert.equal(repliesTo(world, ROOM1, away).length, 0);
      });
    });
  });
}
