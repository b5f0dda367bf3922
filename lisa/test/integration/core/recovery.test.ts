// Sync and send recovery: limited timelines,
// repeated sync responses, lost send responses and a forgotten sync position
// never lose or duplicate a reply.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { matrixTransactionId } from "../../../src/state/txn-id.ts";
import { traitsOf } from "../../support/fake-homeserver/traits.ts";
import { ALICE, BOB, CAROL, LISA, ROOM1, ROOM2, ROOM3, until } from "../../support/lisa-harness.ts";
import { logRecords, peekLedger, PROFILES, repliesTo, replyTargets, scenario, settle, waitForReply, withLedger } from "./helpers.ts";

for (const profile of PROFILES) {
  describe(`sync and send recovery (${profile})`, () => {
    test("a limited gap is recovered in order: every mention in it is answered once, oldest first", async () => {
      await scenario({ profile, config: { matrix: { sync_timeline_limit: 3 } } }, async ({ world, start }) => {
        let lisa = await start();
        const first = await settle(world, ROOM1);
        await lisa.stop();
        // Far more events than one timeline holds: the next sync is limited.
        const mentions: string[] = [];
        for (let i = 0; i < 6; i += 1) {
          mentions.push(world.hs.sendText(ROOM1, i % 2 === 0 ? ALICE : BOB, `Lisa, gap question ${i}?`));
          world.hs.sendText(ROOM1, CAROL, `unrelated chatter ${i}`);
        }
        const otherRoom = world.hs.sendText(ROOM2, CAROL, "Lisa, a question in another room during the gap");
        const mark = world.hs.requests().length;
        lisa = await start();
        for (const id of mentions) await waitForReply(world, ROOM1, id);
        await waitForReply(world, ROOM2, otherRoom);
        const last = await settle(world, ROOM1);
        assert.deepEqual(replyTargets(world, ROOM1), [first, ...mentions, last], "one reply each, in invocation order");
        assert.equal(repliesTo(world, ROOM2, otherRoom).length, 1);
        const afterRestart = world.hs.requests().slice(mark).map((r) => r.endpoint);
        const firstPage = afterRestart.indexOf("messages");
        assert.ok(firstPage >= 0 && firstPage < afterRestart.indexOf("context"), "the ingestor back-paginated before any work began");
        assert.equal(logRecords(world, "matrix_timeline_gap").length, 0, "the anchor was found");
      });
    });

    test("a sync response repeated after a dropped connection creates no duplicate", async () => {
      await scenario({ profile }, async ({ world, start }) => {
        const lisa = await start();
        await settle(world, ROOM1);
        await until(() => world.hs.activeSyncs === 1, 10_000, "Lisa long-polling");
        // The pending long-poll answers with the mention; the next request is
        // dropped, and the retries get that same response again, twice.
        world.hs.failNext("sync", { kind: "drop" });
        world.hs.failNext("sync", { kind: "repeatLastSync" }, { times: 2 });
        const invoking = world.hs.sendText(ROOM1, ALICE, "Lisa, are you still there?");
        await waitForReply(world, ROOM1, invoking);
        await until(() => world.hs.pendingFaults === 0, 15_000, "faults consumed");
        await settle(world, ROOM1);
        assert.equal(repliesTo(world, ROOM1, invoking).length, 1);
        const syncs = world.hs.requests("sync");
        assert.equal(syncs.filter((r) => r.status === "dropped").length, 1);
        assert.equal(syncs.filter((r) => r.fault === "repeatLastSync").length, 2);
        assert.equal(lisa.store.invocation(invoking)?.attemptCount, 1, "processed once");
      });
    });

    test("a send accepted by the server whose response is lost is retried with the same transaction id and recorded once", async () => {
      await scenario({ profile }, async ({ world, start }) => {
        const lisa = await start();
        world.hs.failNext("send", { kind: "dropAfterCommit" });
        const invoking = world.hs.sendText(ROOM1, BOB, "Lisa, tell me a fact");
        await waitForReply(world, ROOM1, invoking);
        await until(() => lisa.store.invocation(invoking)?.status === "sent", 15_000, "row sent");
        await settle(world, ROOM1);
        const row = lisa.store.invocation(invoking);
        const txn = matrixTransactionId(ROOM1, invoking);
        assert.equal(row?.matrixTxnId, txn, "the deterministic transaction id");
        const created = world.hs.sentByTxn(txn);
        assert.equal(created.length, 1);
        assert.equal(row?.sentEventId, created[0]?.event_id);
        const sends = world.hs.requests("send").filter((r) => r.path.endsWith(`/${txn}`));
        assert.deepEqual(sends.map((r) => r.status), ["dropped", 200], "one retry of the same transaction");
        assert.equal(repliesTo(world, ROOM1, invoking).length, 1);
      });
    });

    test("an allowed room Lisa joins later is baselined on first sight: nothing said before she joined is answered", async () => {
      const late = "!late:localhost";
      await scenario({ profile, config: { matrix: { allowed_room_ids: [ROOM1, ROOM2, ROOM3, late] } } }, async ({ world, start }) => {
        world.hs.createRoom(late, [ALICE, BOB]);
        const ancient = world.hs.sendText(late, ALICE, "Lisa, said long before you were here");
        const lisa = await start();
        assert.equal(lisa.store.roomCursor(late), null, "a room Lisa is not in has no anchor yet");
        const beforeJoin = world.hs.sendText(late, BOB, "Lisa, said after your start but before you joined");
        world.hs.join(late, LISA, "Lisa");
        await until(() => lisa.store.roomCursor(late) !== null, 15_000, "the late room's baseline");
        await settle(world, late);
        assert.equal(repliesTo(world, late, ancient).length, 0);
        assert.equal(repliesTo(world, late, beforeJoin).length, 0);
        assert.equal(lisa.store.invocation(beforeJoin), null);
      });
    });

    // Continuwuity never answers M_UNKNOWN_POS (it sends a full response instead; see the quirks below).
    if (!traitsOf(profile).unknownSinceGetsFullResponse) {
      test("M_UNKNOWN_POS starts a new baseline: mentions from before the reset are not answered, later ones are", async () => {
        await scenario({ profile }, async ({ world, start }) => {
          let lisa = await start();
          await settle(world, ROOM1);
          await lisa.stop();
          const lost = world.hs.sendText(ROOM1, ALICE, "Lisa, sent before the server forgot Lisa's position");
          world.hs.failNext("sync", { kind: "unknownPos" });
          lisa = await start();
          await until(() => logRecords(world, "sync_baseline").length === 2, 15_000, "a second baseline");
          assert.equal(logRecords(world, "matrix_unknown_pos").length, 1);
          const later = world.hs.sendText(ROOM1, BOB, "Lisa, sent after the new baseline");
          await waitForReply(world, ROOM1, later);
          await settle(world, ROOM1);
          assert.equal(repliesTo(world, ROOM1, lost).length, 0);
          assert.equal(lisa.store.invocation(lost), null);
          assert.equal(repliesTo(world, ROOM1, later).length, 1);
        });
      });
    }
  });
}

describe("sync recovery (continuwuity quirks)", () => {
  test("an unparsable stored sync token yields a full sync whose history is never answered", async () => {
    await scenario({ profile: "continuwuity" }, async ({ world, start }) => {
      const history = world.hs.sendText(ROOM1, ALICE, "Lisa, ancient history");
      let lisa = await start();
      await settle(world, ROOM1);
      await lisa.stop();
      // Continuwuity silently answers an unknown `since` with a full initial sync.
      withLedger(world, (store) => store.commitSyncBatch({ nextBatch: "not-a-continuwuity-token", rooms: [], candidates: [] }));
      const fresh = world.hs.sendText(ROOM1, BOB, "Lisa, a fresh question");
      lisa = await start();
      await waitForReply(world, ROOM1, fresh);
      await settle(world, ROOM1);
      await lisa.stop();
      assert.equal(repliesTo(world, ROOM1, history).length, 0);
      assert.equal(repliesTo(world, ROOM1, fresh).length, 1);
      assert.ok(world.hs.requests("sync").some((r) => r.query["since"] === "not-a-continuwuity-token"));
      assert.equal(logRecords(world, "sync_baseline").length, 1, "no replacement baseline");
      assert.equal(peekLedger(world, (store) => store.invocation(history)), null);
    });
  });

  test("an unknown position answered with 200 and a full response: nothing at or before the cursor is answered again, what follows it once", async () => {
    await scenario({ profile: "continuwuity" }, async ({ world, start }) => {
      const history = world.hs.sendText(ROOM1, ALICE, "Lisa, history before the first start");
      let lisa = await start();
      const answered = world.hs.sendText(ROOM1, BOB, "Lisa, answered before the stop");
      await waitForReply(world, ROOM1, answered);
      const sentinel = await settle(world, ROOM1);
      await lisa.stop();
      const whileDown = world.hs.sendText(ROOM1, ALICE, "Lisa, sent while you were stopped");
      // Measured on Continuwuity 26.8: a since it does not know gets 200 and a full response.
      world.hs.failNext("sync", { kind: "unknownPos" });
      lisa = await start();
      await waitForReply(world, ROOM1, whileDown);
      await settle(world, ROOM1);
      await lisa.stop();
      assert.ok(world.hs.requests("sync").some((r) => r.fault === "unknownPos"), "the full response was served");
      assert.equal(repliesTo(world, ROOM1, history).length, 0);
      assert.equal(repliesTo(world, ROOM1, answered).length, 1);
      assert.equal(repliesTo(world, ROOM1, sentinel).length, 1);
      assert.equal(repliesTo(world, ROOM1, whileDown).length, 1);
      assert.equal(logRecords(world, "matrix_unknown_pos").length, 0);
      assert.equal(logRecords(world, "sync_baseline").length, 1, "no replacement baseline");
    });
  });
});
