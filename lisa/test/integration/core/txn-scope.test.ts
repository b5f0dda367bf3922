// Exactly once independent of the server's transaction-id scope (LISA-COMPAT-01,
// item 3). Dendrite deduplicates a txn id per access token, so a
// reply resent under a renewed token (after a refused token, or after a
// restart's new login) would be posted twice on the txn id alone. Lisa marks
// each reply with its txn id and looks for it in the room before such a resend.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { REPLY_MARKER_KEY } from "../../../src/invocation/sent-lookup.ts";
import { matrixTransactionId } from "../../../src/state/txn-id.ts";
import { ALICE, ROOM1, until } from "../../support/lisa-harness.ts";
import { logRecords, peekLedger, PROFILES, repliesTo, scenario, settle, waitForReply } from "./helpers.ts";

function foundInRoom(records: readonly Record<string, unknown>[]): number {
  return records.filter((r) => r["found_in_room"] === true).length;
}

for (const profile of PROFILES) {
  describe(`exactly once whatever the transaction-id scope (${profile})`, () => {
    test("a reply that reached the room while its response was lost is not posted again after the token was renewed", async () => {
      await scenario({ profile }, async ({ world, start }) => {
        await start();
        // The first send is stored and its response lost; the retry finds the token refused.
        world.hs.failNext("send", { kind: "dropAfterCommit" });
        world.hs.failNext("send", { kind: "expireToken" });
        const asked = world.hs.sendText(ROOM1, ALICE, "Lisa, answer me exactly once");
        const reply = await waitForReply(world, ROOM1, asked);
        await until(() => peekLedger(world, (s) => s.invocation(asked))?.status === "sent", 15_000, "the reply recorded as sent");
        await settle(world, ROOM1);
        const txnId = matrixTransactionId(ROOM1, asked);
        assert.equal(reply.content[REPLY_MARKER_KEY], txnId, "the reply carries its invocation's transaction id");
        assert.equal(repliesTo(world, ROOM1, asked).length, 1, "one reply");
        assert.equal(world.hs.sentByTxn(txnId).length, 1, "one event under the transaction id");
        assert.equal(peekLedger(world, (s) => s.invocation(asked))?.sentEventId, reply.event_id, "the found event is the one recorded");
        assert.equal(foundInRoom(logRecords(world, "invocation_sent")), 1, "found in the room instead of sent again");
      });
    });

    test("after a restart (a new login, a new token) a stored reply that had reached the room is found, not posted again", async () => {
      await scenario({ profile }, async ({ world, start }) => {
        let lisa = await start();
        // Stored, response lost, then every retry of this run fails: the reply stays ready_to_send.
        world.hs.failNext("send", { kind: "dropAfterCommit" });
        world.hs.failNext("send", { kind: "status", status: 503, errcode: "M_UNKNOWN" }, { times: 50 });
        const asked = world.hs.sendText(ROOM1, ALICE, "Lisa, one answer across a restart");
        await until(() => {
          const row = peekLedger(world, (s) => s.invocation(asked));
          return row?.status === "ready_to_send" && row.lastErrorCode !== null;
        }, 20_000, "a send failure recorded");
        assert.equal(repliesTo(world, ROOM1, asked).length, 1, "the first attempt reached the room");
        await lisa.stop();
        world.hs.clearFaults();
        lisa = await start();
        await until(() => peekLedger(world, (s) => s.invocation(asked))?.status === "sent", 15_000, "the stored reply recorded as sent");
        await settle(world, ROOM1);
        assert.equal(repliesTo(world, ROOM1, asked).length, 1, "still one reply");
        assert.equal(world.hs.sentByTxn(matrixTransactionId(ROOM1, asked)).length, 1);
        assert.equal(foundInRoom(logRecords(world, "invocation_sent")), 1);
      });
    });
  });
}
