import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { FakeHomeserver, HomeserverProfile } from "../../support/fake-homeserver.ts";
import { traitsOf } from "../../support/fake-homeserver/traits.ts";
import { V3, call, login, seg, sync, loggedInServer } from "../../support/fake-homeserver/test-client.ts";

const LISA = "@lisa:localhost";
const ALICE = "@alice:localhost";
const BOB = "@bob:localhost";
const V1 = "/_matrix/client/v1";


const sendPath = (roomId: string, txnId: string): string => `${V3}/rooms/${seg(roomId)}/send/m.room.message/${seg(txnId)}`;
const bodyOf = (e: { content: { body?: unknown } }): unknown => e.content.body;

for (const profile of ["synapse", "continuwuity", "dendrite"] as const satisfies readonly HomeserverProfile[]) {
  describe(`fake homeserver rooms (${profile})`, () => {
    const ctx = loggedInServer(profile, LISA);

    test("/context splits the limit, returns events_before newest first, and member state with display names", async () => {
      const { hs, token } = ctx;
      const roomId = "!ctx:localhost";
      hs.createRoom(roomId, [{ userId: ALICE, displayName: "Alice A." }, LISA]);
      const ids = Array.from({ length: 9 }, (_, i) => hs.sendText(roomId, ALICE, `c${i}`));
      const res = await call(hs, "GET", `${V3}/rooms/${seg(roomId)}/context/${seg(ids[4] ?? "")}`, { token, query: { limit: 5 } });
      assert.equal(res.status, 200);
      assert.equal(res.body.event.event_id, ids[4]);
      assert.equal(res.body.event.room_id, roomId);
      assert.deepEqual(res.body.events_before.map(bodyOf), ["c3", "c2"]);
      assert.deepEqual(res.body.events_after.map(bodyOf), profile !== "continuwuity" ? ["c5", "c6", "c7"] : ["c5", "c6"]);
      const alice = res.body.state.find((e: { type: string; state_key: string }) => e.type === "m.room.member" && e.state_key === ALICE);
      assert.equal(alice.content.displayname, "Alice A.");
      const back = await call(hs, "GET", `${V3}/rooms/${seg(roomId)}/messages`, { token, query: { dir: "b", from: res.body.start, limit: 2 } });
      assert.deepEqual(back.body.chunk.map(bodyOf), ["c1", "c0"]);
      const forward = await call(hs, "GET", `${V3}/rooms/${seg(roomId)}/messages`, { token, query: { dir: "f", from: res.body.end, limit: 10 } });
      assert.deepEqual(forward.body.chunk.map(bodyOf), profile !== "continuwuity" ? ["c8"] : ["c7", "c8"]);
    });

    test("/context caps the limit at 100", async () => {
      const { hs, token } = ctx;
      const roomId = "!cap:localhost";
      hs.createRoom(roomId, [ALICE, LISA]);
      let last = "";
      for (let i = 0; i < 120; i += 1) last = hs.sendText(roomId, ALICE, `n${i}`);
      const res = await call(hs, "GET", `${V3}/rooms/${seg(roomId)}/context/${seg(last)}`, { token, query: { limit: 500 } });
      assert.equal(res.body.events_before.length, 50);
      assert.equal(res.body.events_before[0].content.body, "n118");
    });

    test("/context of an unknown event is 404 M_NOT_FOUND", async () => {
      const { hs, token } = ctx;
      hs.createRoom("!ctx404:localhost", [ALICE, LISA]);
      const res = await call(hs, "GET", `${V3}/rooms/${seg("!ctx404:localhost")}/context/${seg("$missing")}`, { token });
      assert.equal(res.status, 404);
      assert.equal(res.body.errcode, "M_NOT_FOUND");
    });

    test("/event returns the event, and 404 when absent or when the requester is not a member", async () => {
      const { hs, token } = ctx;
      hs.createRoom("!ev:localhost", [ALICE, LISA]);
      hs.createRoom("!private:localhost", [BOB]);
      const id = hs.sendText("!ev:localhost", ALICE, "hello");
      const secret = hs.sendText("!private:localhost", BOB, "secret");
      const res = await call(hs, "GET", `${V3}/rooms/${seg("!ev:localhost")}/event/${seg(id)}`, { token });
      assert.equal(res.status, 200);
      assert.equal(res.body.sender, ALICE);
      assert.equal(res.body.content.body, "hello");
      assert.equal(typeof res.body.origin_server_ts, "number");
      const absent = await call(hs, "GET", `${V3}/rooms/${seg("!ev:localhost")}/event/${seg("$nope")}`, { token });
      assert.equal(absent.status, 404);
      assert.equal(absent.body.errcode, "M_NOT_FOUND");
      const hidden = await call(hs, "GET", `${V3}/rooms/${seg("!private:localhost")}/event/${seg(secret)}`, { token });
      assert.equal(hidden.status, 404);
      const wrongRoom = await call(hs, "GET", `${V3}/rooms/${seg("!ev:localhost")}/event/${seg(secret)}`, { token });
      assert.equal(wrongRoom.status, 404);
    });

    test("/relations m.thread pages a thread newest first without the root", async () => {
      const { hs, token } = ctx;
      const roomId = "!thread:localhost";
      hs.createRoom(roomId, [ALICE, LISA]);
      const root = hs.sendText(roomId, ALICE, "root");
      for (let i = 0; i < 5; i += 1) hs.threadReply(roomId, ALICE, root, `t${i}`);
      hs.sendText(roomId, ALICE, "outside");
      const path = `${V1}/rooms/${seg(roomId)}/relations/${seg(root)}/m.thread`;
      const page1 = await call(hs, "GET", path, { token, query: { dir: "b", limit: 3 } });
      assert.equal(page1.status, 200);
      assert.deepEqual(page1.body.chunk.map(bodyOf), ["t4", "t3", "t2"]);
      assert.equal(typeof page1.body.next_batch, "string");
      const page2 = await call(hs, "GET", path, { token, query: { dir: "b", limit: 3, from: page1.body.next_batch } });
      assert.deepEqual(page2.body.chunk.map(bodyOf), ["t1", "t0"]);
      if (traitsOf(profile).relationsNextBatchOnLastPage) {
        // Continuwuity: a token on the last page too; the page after it is empty and has none.
        assert.equal(typeof page2.body.next_batch, "string");
        const page3 = await call(hs, "GET", path, { token, query: { dir: "b", limit: 3, from: page2.body.next_batch } });
        assert.deepEqual(page3.body.chunk, []);
        assert.equal(page3.body.next_batch, undefined);
      } else {
        assert.equal(page2.body.next_batch, undefined);
      }
      const relation = page1.body.chunk[0].content["m.relates_to"];
      assert.equal(relation.rel_type, "m.thread");
      assert.equal(relation.event_id, root);
      assert.equal(relation.is_falling_back, true);
    });

    test("sending with the same transaction id returns the original event id and creates nothing", async () => {
      const { hs, token } = ctx;
      const roomId = "!txn:localhost";
      hs.createRoom(roomId, [ALICE, LISA]);
      const content = { msgtype: "m.text", body: "reply" };
      const first = await call(hs, "PUT", sendPath(roomId, "lisa_txn_1"), { token, body: content });
      const second = await call(hs, "PUT", sendPath(roomId, "lisa_txn_1"), { token, body: content });
      assert.equal(first.status, 200);
      assert.equal(second.body.event_id, first.body.event_id);
      assert.equal(hs.eventsBy(LISA, roomId).filter((e) => e.type === "m.room.message").length, 1);
      assert.equal(hs.sentByTxn("lisa_txn_1").length, 1);
      assert.equal(hs.sentByTxn("lisa_txn_1")[0]?.event_id, first.body.event_id);
    });

    test("the same transaction id from another device is a new event", async () => {
      const { hs, token } = ctx;
      const roomId = "!txndev:localhost";
      hs.createRoom(roomId, [ALICE, LISA]);
      const other = (await login(hs, LISA, "pw", { device_id: "SECOND" })).access_token;
      const a = await call(hs, "PUT", sendPath(roomId, "shared_txn"), { token, body: { msgtype: "m.text", body: "a" } });
      const b = await call(hs, "PUT", sendPath(roomId, "shared_txn"), { token: other, body: { msgtype: "m.text", body: "b" } });
      assert.notEqual(a.body.event_id, b.body.event_id);
    });

    test("the transaction scope across rooms follows the profile", async () => {
      const { hs, token } = ctx;
      hs.createRoom("!scope1:localhost", [ALICE, LISA]);
      hs.createRoom("!scope2:localhost", [ALICE, LISA]);
      const a = await call(hs, "PUT", sendPath("!scope1:localhost", "scoped"), { token, body: { msgtype: "m.text", body: "1" } });
      const b = await call(hs, "PUT", sendPath("!scope2:localhost", "scoped"), { token, body: { msgtype: "m.text", body: "2" } });
      if (profile !== "continuwuity") assert.notEqual(b.body.event_id, a.body.event_id);
      else assert.equal(b.body.event_id, a.body.event_id);
    });

    test("sending to a room the user is not joined to is 403 M_FORBIDDEN", async () => {
      const { hs, token } = ctx;
      hs.createRoom("!closed:localhost", [ALICE]);
      const res = await call(hs, "PUT", sendPath("!closed:localhost", "t403"), { token, body: { msgtype: "m.text", body: "x" } });
      assert.equal(res.status, 403);
      assert.equal(res.body.errcode, "M_FORBIDDEN");
      const unknown = await call(hs, "PUT", sendPath("!nowhere:localhost", "t403b"), { token, body: { msgtype: "m.text", body: "x" } });
      assert.equal(unknown.status, 403);
    });

    test("an event over 64 KiB is 413 M_TOO_LARGE and a non-JSON body 400 M_NOT_JSON", async () => {
      const { hs, token } = ctx;
      hs.createRoom("!big:localhost", [ALICE, LISA]);
      const res = await call(hs, "PUT", sendPath("!big:localhost", "big"), { token, body: { msgtype: "m.text", body: "x".repeat(70_000) } });
      assert.equal(res.status, 413);
      assert.equal(res.body.errcode, "M_TOO_LARGE");
      const raw = await fetch(new URL(sendPath("!big:localhost", "notjson"), hs.url), {
        method: "PUT",
        headers: { authorization: `Bearer ${token}` },
        body: "{not json",
      });
      assert.equal(raw.status, 400);
      assert.equal(((await raw.json()) as { errcode: string }).errcode, "M_NOT_JSON");
    });

    test("typing changes are recorded with the server's timeout handling", async () => {
      const { hs, token } = ctx;
      const roomId = "!typing:localhost";
      hs.createRoom(roomId, [ALICE, LISA]);
      const path = `${V3}/rooms/${seg(roomId)}/typing/${seg(LISA)}`;
      for (const timeout of [5_000, 30_000, 200_000]) {
        assert.equal((await call(hs, "PUT", path, { token, body: { typing: true, timeout } })).status, 200);
      }
      assert.equal(hs.isTyping(roomId, LISA), true);
      assert.equal((await call(hs, "PUT", path, { token, body: { typing: false } })).status, 200);
      const history = hs.typingHistory(roomId);
      const expected = profile !== "continuwuity" ? [5_000, 30_000, 120_000, null] : [15_000, 30_000, 45_000, null];
      assert.deepEqual(history.map((r) => r.effectiveTimeoutMs), expected);
      assert.deepEqual(history.map((r) => r.requestedTimeoutMs), [5_000, 30_000, 200_000, null]);
      assert.deepEqual(history.map((r) => r.typing), [true, true, true, false]);
      assert.equal(hs.isTyping(roomId, LISA), false);
    });

    test("typing for another user or in a foreign room is refused", async () => {
      const { hs, token } = ctx;
      hs.createRoom("!typing2:localhost", [ALICE, LISA]);
      hs.createRoom("!typing3:localhost", [ALICE]);
      const other = await call(hs, "PUT", `${V3}/rooms/${seg("!typing2:localhost")}/typing/${seg(ALICE)}`, { token, body: { typing: true, timeout: 30_000 } });
      assert.equal(other.status, profile !== "continuwuity" ? 400 : 403);
      assert.equal(other.body.errcode, "M_FORBIDDEN");
      const foreign = await call(hs, "PUT", `${V3}/rooms/${seg("!typing3:localhost")}/typing/${seg(LISA)}`, { token, body: { typing: true, timeout: 30_000 } });
      assert.equal(foreign.status, 403);
      assert.deepEqual(hs.typingHistory("!typing3:localhost"), []);
    });

    test("a redaction empties the content and sets unsigned.redacted_because everywhere (Dendrite: no unsigned at all)", async () => {
      const { hs, token } = ctx;
      const roomId = "!redact:localhost";
      hs.createRoom(roomId, [ALICE, LISA]);
      const target = hs.sendText(roomId, ALICE, "oops");
      const redaction = hs.redact(roomId, ALICE, target, "typo");
      const viaEvent = await call(hs, "GET", `${V3}/rooms/${seg(roomId)}/event/${seg(target)}`, { token });
      assert.deepEqual(viaEvent.body.content, {});
      const unsigned = traitsOf(profile).unsignedOnEvents;
      if (unsigned) {
        assert.equal(viaEvent.body.unsigned.redacted_because.event_id, redaction);
        assert.equal(viaEvent.body.unsigned.redacted_because.redacts, target);
        assert.equal(viaEvent.body.unsigned.redacted_because.content.reason, "typo");
      } else {
        assert.equal(viaEvent.body.unsigned, undefined, "the emptied content is the only sign of the redaction");
      }
      const initial = await sync(hs, token, { timeout: 0 });
      const events = initial.body.rooms.join[roomId].timeline.events;
      const synced = events.find((e: { event_id: string }) => e.event_id === target);
      assert.deepEqual(synced.content, {});
      assert.equal(synced.unsigned?.redacted_because !== undefined, unsigned);
      const member = hs.timeline(roomId).find((e) => e.type === "m.room.member");
      assert.equal(member?.content["membership"], "join");
    });

    test("reactions, edits, replies and notices have the shapes real clients send", async () => {
      const { hs } = ctx;
      const roomId = "!shapes:localhost";
      hs.createRoom(roomId, [ALICE, LISA]);
      const target = hs.sendText(roomId, ALICE, "original", { "m.mentions": { user_ids: [LISA] } });
      const reaction = hs.event(hs.react(roomId, ALICE, target, "👍"));
      assert.equal(reaction?.type, "m.reaction");
      assert.deepEqual(reaction?.content, { "m.relates_to": { rel_type: "m.annotation", event_id: target, key: "👍" } });
      const edit = hs.event(hs.edit(roomId, ALICE, target, "fixed"));
      assert.deepEqual(edit?.content["m.new_content"], { msgtype: "m.text", body: "fixed" });
      assert.deepEqual(edit?.content["m.relates_to"], { rel_type: "m.replace", event_id: target });
      const reply = hs.event(hs.reply(roomId, ALICE, target, "answer"));
      assert.deepEqual(reply?.content["m.relates_to"], { "m.in_reply_to": { event_id: target } });
      const notice = hs.event(hs.sendNotice(roomId, ALICE, "note"));
      assert.equal(notice?.content["msgtype"], "m.notice");
      assert.deepEqual(hs.event(target)?.content["m.mentions"], { user_ids: [LISA] });
    });

    test("a display-name change is a member state event with prev_content (Dendrite: without)", async () => {
      const { hs } = ctx;
      hs.createRoom("!names:localhost", [ALICE, LISA]);
      const change = hs.event(hs.setDisplayName("!names:localhost", ALICE, "Alicia"));
      assert.equal(change?.state_key, ALICE);
      assert.equal(change?.content["displayname"], "Alicia");
      const expected = traitsOf(profile).unsignedOnEvents ? { membership: "join", displayname: "alice" } : undefined;
      assert.deepEqual(change?.unsigned?.["prev_content"], expected);
    });

    test("event ids are unique and timestamps monotonic, while a clock offset or explicit ts crafts old events", async () => {
      const { hs } = ctx;
      hs.createRoom("!clock:localhost", [ALICE, LISA]);
      const ids = Array.from({ length: 50 }, (_, i) => hs.sendText("!clock:localhost", ALICE, `x${i}`));
      assert.equal(new Set(ids).size, 50);
      assert.ok(ids.every((id) => /^\$[A-Za-z0-9_-]{43}$/.test(id)));
      const stamps = ids.map((id) => hs.event(id)?.origin_server_ts ?? 0);
      assert.ok(stamps.every((ts, i) => i === 0 || ts > (stamps[i - 1] ?? 0)));
      hs.setClockOffset(-86_400_000);
      const old = hs.event(hs.sendText("!clock:localhost", ALICE, "yesterday"))?.origin_server_ts ?? 0;
      hs.setClockOffset(0);
      assert.ok(old < (stamps[0] ?? 0) - 86_000_000);
      const explicit = hs.event(hs.sendText("!clock:localhost", ALICE, "epoch", {}, { originServerTs: 1_000 }));
      assert.equal(explicit?.origin_server_ts, 1_000);
    });

    test("GET /joined_rooms lists the user's joined rooms", async () => {
      const { hs, token } = ctx;
      hs.createRoom("!joined:localhost", [ALICE, LISA]);
      const res = await call(hs, "GET", `${V3}/joined_rooms`, { token });
      assert.ok(res.body.joined_rooms.includes("!joined:localhost"));
      assert.ok(!res.body.joined_rooms.includes("!closed:localhost"));
    });

    test("the human-side helpers refuse a sender who is not joined", () => {
      const { hs } = ctx;
      hs.createRoom("!strict:localhost", [ALICE]);
      assert.throws(() => hs.sendText("!strict:localhost", BOB, "sneaky"), /not joined/);
    });
  });
}
