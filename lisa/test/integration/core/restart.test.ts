// Restart from every invocation state produces at most one Matrix event
//. States are crafted directly in the ledger
// while Lisa is stopped, or reached for real (a stop during an LLM request,
// a send whose acceptance never reached Lisa).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { StateStore } from "../../../src/state/types.ts";
import { syncToken } from "../../support/fake-homeserver.ts";
import { jsonAnswer, type RecordedRequest, type ScriptedResponse } from "../../support/scripted-llm.ts";
import { ALICE, BOB, CAROL, lisaReplies, ROOM1, ROOM2, ROOM3, until, type World } from "../../support/lisa-harness.ts";
import { bodyOf, peekLedger, PROFILES, repliesTo, replyTargets, scenario, settle, waitForReply, withLedger } from "./helpers.ts";

/** Records `eventId` as a candidate and moves the sync position past everything the server has. */
function recordCandidate(world: World, store: StateStore, roomId: string, eventId: string): void {
  const event = world.hs.event(eventId);
  if (event === undefined) throw new Error("unknown event");
  store.commitSyncBatch({
    nextBatch: syncToken(world.hs.profile, world.hs.streamPosition),
    rooms: [],
    candidates: [{ eventId, roomId, senderId: event.sender, receivedAtMs: event.origin_server_ts, rawEventJson: JSON.stringify({ ...event, room_id: roomId }) }],
  });
}

const HOUR_MS = 3_600_000;

for (const profile of PROFILES) {
  describe(`restart from every invocation state (${profile})`, () => {
    test("a candidate recorded before a stop is answered once after restart, from the ledger alone", async () => {
      await scenario({ profile }, async ({ world, start }) => {
        let lisa = await start();
        await settle(world, ROOM1);
        await lisa.stop();
        const invoking = world.hs.sendText(ROOM1, ALICE, "Lisa, recorded as a candidate");
        withLedger(world, (store) => recordCandidate(world, store, ROOM1, invoking));
        lisa = await start();
        await waitForReply(world, ROOM1, invoking);
        await settle(world, ROOM1);
        assert.equal(repliesTo(world, ROOM1, invoking).length, 1);
      });
    });

    test("a processing row whose lease is still live is requeued at startup and answered once", async () => {
      await scenario({ profile }, async ({ world, start }) => {
        let lisa = await start();
        await settle(world, ROOM2);
        await lisa.stop();
        const invoking = world.hs.sendText(ROOM2, BOB, "Lisa, leased when the process died");
        withLedger(world, (store) => {
          recordCandidate(world, store, ROOM2, invoking);
          assert.equal(store.nextForRoom(ROOM2, HOUR_MS)?.kind, "process");
          assert.equal(store.invocation(invoking)?.status, "processing");
        });
        lisa = await start();
        await waitForReply(world, ROOM2, invoking);
        await settle(world, ROOM2);
        assert.equal(repliesTo(world, ROOM2, invoking).length, 1);
        assert.equal(lisa.store.invocation(invoking)?.attemptCount, 2, "the dead lease counted as one attempt");
      });
    });

    test("a stop during the LLM request returns the row to candidate; the restart answers it once", async () => {
      const script = (_request: RecordedRequest, index: number): ScriptedResponse =>
        ({ ...jsonAnswer(`Indeed, answer number ${index + 1}.`), ...(index === 0 ? { delayMs: 60_000 } : {}) });
      await scenario({ profile, llmScript: script, config: { runtime: { shutdown_grace_seconds: 0 } } }, async ({ world, start }) => {
        let lisa = await start();
        const invoking = world.hs.sendText(ROOM3, CAROL, "Lisa, a slow question");
        await until(() => world.llm.requests.length === 1, 15_000, "the LLM request");
        assert.equal(await lisa.stop(), 0);
        const released = peekLedger(world, (store) => store.invocation(invoking));
        assert.equal(released?.status, "candidate");
        assert.equal(released?.lastErrorCode, "shutdown");
        assert.equal(lisaReplies(world, ROOM3).length, 0);
        lisa = await start();
        await waitForReply(world, ROOM3, invoking);
        await settle(world, ROOM3);
        assert.equal(repliesTo(world, ROOM3, invoking).length, 1);
      });
    });

    test("a ready_to_send reply is sent verbatim after restart without asking the LLM again", async () => {
      await scenario({ profile }, async ({ world, start }) => {
        let lisa = await start();
        await settle(world, ROOM1);
        await lisa.stop();
        const invoking = world.hs.sendText(ROOM1, ALICE, "Lisa, answered before the crash");
        const stored = {
          msgtype: "m.text",
          body: "A stored reply that must be sent exactly as committed.",
          "m.relates_to": { "m.in_reply_to": { event_id: invoking } },
          "m.mentions": { user_ids: [ALICE] },
        };
        withLedger(world, (store) => {
          recordCandidate(world, store, ROOM1, invoking);
          store.nextForRoom(ROOM1, HOUR_MS);
          store.commitReady(invoking, JSON.stringify(stored));
        });
        const llmBefore = world.llm.requests.length;
        lisa = await start();
        const reply = await waitForReply(world, ROOM1, invoking);
        assert.deepEqual(reply.content, stored);
        assert.equal(world.llm.requests.length, llmBefore, "never regenerated");
        await settle(world, ROOM1);
        assert.equal(repliesTo(world, ROOM1, invoking).length, 1);
      });
    });

    test("a reply the server accepted but Lisa never recorded is resent under its transaction id and exists once", async () => {
      await scenario({ profile }, async ({ world, start }) => {
        let lisa = await start();
        await settle(world, ROOM2);
        // Every attempt is committed by the server and its response lost: the
        // client gives up and the row stays ready_to_send.
        world.hs.failNext("send", { kind: "dropAfterCommit" }, { times: 20 });
        const invoking = world.hs.sendText(ROOM2, BOB, "Lisa, your answer will get lost on the wire");
        await until(() => lisa.store.invocation(invoking)?.lastErrorCode === "matrix_network", 20_000, "a failed send");
        await lisa.stop();
        world.hs.clearFaults();
        const row = peekLedger(world, (store) => store.invocation(invoking));
        assert.equal(row?.status, "ready_to_send");
        assert.equal(world.hs.sentByTxn(row.matrixTxnId).length, 1, "the server already has the event");
        lisa = await start();
        await until(() => lisa.store.invocation(invoking)?.status === "sent", 15_000, "row sent");
        await settle(world, ROOM2);
        const created = world.hs.sentByTxn(row.matrixTxnId);
        assert.equal(created.length, 1);
        assert.equal(lisa.store.invocation(invoking)?.sentEventId, created[0]?.event_id);
        assert.equal(repliesTo(world, ROOM2, invoking).length, 1);
      });
    });

    test("sent and ignored invocations stay silent after restart", async () => {
      await scenario({ profile }, async ({ world, start }) => {
        let lisa = await start();
        const answered = world.hs.sendText(ROOM3, ALICE, "Lisa, answer me once");
        const statement = world.hs.sendText(ROOM3, BOB, "a statement");
        const ignored = world.hs.reply(ROOM3, CAROL, statement, "a reply to Bob");
        await waitForReply(world, ROOM3, answered);
        await settle(world, ROOM3);
        await lisa.stop();
        const before = lisaReplies(world, ROOM3).length;
        lisa = await start();
        const after = await settle(world, ROOM3);
        assert.equal(lisaReplies(world, ROOM3).length, before + 1, "only the new sentinel was answered");
        assert.equal(repliesTo(world, ROOM3, answered).length, 1);
        assert.equal(repliesTo(world, ROOM3, ignored).length, 0);
        assert.equal(replyTargets(world, ROOM3).at(-1), after);
        assert.equal(lisa.store.invocation(ignored)?.status, "ignored");
      });
    });

    test("mentions sent while Lisa is stopped are each answered once after restart, oldest first", async () => {
      await scenario({ profile }, async ({ world, start }) => {
        const history = world.hs.sendText(ROOM1, ALICE, "Lisa, before Lisa ever started");
        let lisa = await start();
        const first = await settle(world, ROOM1);
        await lisa.stop();
        const queued = [
          world.hs.sendText(ROOM1, ALICE, "Lisa, first while you were away"),
          world.hs.sendText(ROOM1, BOB, "Lisa, second while you were away"),
          world.hs.sendText(ROOM1, CAROL, "Lisa, third while you were away"),
        ];
        const chatter = world.hs.sendText(ROOM1, BOB, "ordinary chatter during the outage");
        const elsewhere = world.hs.sendText(ROOM2, ALICE, "Lisa, also while you were away");
        lisa = await start();
        for (const id of queued) await waitForReply(world, ROOM1, id);
        await waitForReply(world, ROOM2, elsewhere);
        const last = await settle(world, ROOM1);
        assert.deepEqual(replyTargets(world, ROOM1), [first, ...queued, last]);
        assert.equal(repliesTo(world, ROOM1, history).length, 0);
        assert.equal(repliesTo(world, ROOM1, chatter).length, 0);
        assert.equal(repliesTo(world, ROOM2, elsewhere).length, 1);
        assert.ok(lisaReplies(world, ROOM1).every((e) => bodyOf(e).length > 0));
      });
    });
  });
}
