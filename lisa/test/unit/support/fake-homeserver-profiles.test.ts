// The fake's profiles reproduce what real Continuwuity 26.8 and Dendrite 0.13.8
// were measured to do differently from Synapse (LISA-COMPAT-01; docs/operations.md,
// compatibility), so the integration suite pins Lisa against each of them.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { HomeserverProfile } from "../../support/fake-homeserver.ts";
import { traitsOf } from "../../support/fake-homeserver/traits.ts";
import { V3, call, login, loggedInServer, seg, sync } from "../../support/fake-homeserver/test-client.ts";

const LISA = "@lisa:localhost";
const ALICE = "@alice:localhost";
const PROFILES = ["synapse", "continuwuity", "dendrite"] as const satisfies readonly HomeserverProfile[];

const send = (hs: Parameters<typeof call>[0], token: string, roomId: string, txnId: string) =>
  call(hs, "PUT", `${V3}/rooms/${seg(roomId)}/send/m.room.message/${seg(txnId)}`, { token, body: { msgtype: "m.text", body: "once" } });

for (const profile of PROFILES) {
  describe(`measured profile behaviours (${profile})`, () => {
    const ctx = loggedInServer(profile, LISA);
    const traits = traitsOf(profile);

    test("a repeated transaction id after a new login with the same device creates a second event only on Dendrite", async () => {
      const { hs } = ctx;
      const roomId = "!txnscope:localhost";
      hs.createRoom(roomId, [ALICE, LISA]);
      // Its own device, so the shared login of the other tests stays valid.
      const token = (await login(hs, LISA, "pw", { device_id: "TXNDEV" })).access_token as string;
      const first = await send(hs, token, roomId, "txn-scope-1");
      const again = await send(hs, token, roomId, "txn-scope-1");
      assert.equal(again.body.event_id, first.body.event_id, "the same token deduplicates everywhere");
      const relogged = (await login(hs, LISA, "pw", { device_id: "TXNDEV" })).access_token as string;
      const afterLogin = await send(hs, relogged, roomId, "txn-scope-1");
      assert.equal(afterLogin.body.event_id !== first.body.event_id, traits.txnScope === "access_token");
      assert.equal(hs.sentByTxn("txn-scope-1").length, traits.txnScope === "access_token" ? 2 : 1);
    });

    test("a new login with the same device invalidates the previous token on Continuwuity and Dendrite", async () => {
      const { hs } = ctx;
      const old = (await login(hs, LISA, "pw", { device_id: "REPLACEDEV" })).access_token as string;
      await login(hs, LISA, "pw", { device_id: "REPLACEDEV" });
      const who = await call(hs, "GET", `${V3}/account/whoami`, { token: old });
      assert.equal(who.status, traits.loginReplacesDeviceTokens ? 401 : 200);
      if (traits.loginReplacesDeviceTokens) assert.equal(who.body.errcode, "M_UNKNOWN_TOKEN");
    });

    test("refresh tokens exist only on Synapse; elsewhere /refresh is 404 M_UNRECOGNIZED", async () => {
      const { hs } = ctx;
      const body = await login(hs, LISA, "pw", { device_id: "REFRESHDEV", refresh_token: true });
      assert.equal(typeof body.refresh_token === "string", traits.refreshTokens);
      if (!traits.refreshTokens) {
        const refreshed = await call(hs, "POST", `${V3}/refresh`, { body: { refresh_token: "anything" } });
        assert.equal(refreshed.status, 404);
        assert.equal(refreshed.body.errcode, "M_UNRECOGNIZED");
      }
    });

    test("the sync filter's room list is applied only on Synapse", async () => {
      const { hs, token } = ctx;
      hs.createRoom("!wanted:localhost", [ALICE, LISA]);
      hs.createRoom("!unwanted:localhost", [ALICE, LISA]);
      const res = await sync(hs, token, { timeout: 0, filter: JSON.stringify({ room: { rooms: ["!wanted:localhost"], timeline: { limit: 5 } } }) });
      assert.ok("!wanted:localhost" in res.body.rooms.join);
      assert.equal("!unwanted:localhost" in res.body.rooms.join, !traits.appliesFilterRoomList);
    });

    test("events carry unsigned except on Dendrite, whose rooms default to version 10", async () => {
      const { hs, token } = ctx;
      const roomId = "!shape:localhost";
      hs.createRoom(roomId, [ALICE, LISA]);
      const id = hs.sendText(roomId, ALICE, "hello");
      const fetched = await call(hs, "GET", `${V3}/rooms/${seg(roomId)}/event/${seg(id)}`, { token });
      assert.equal(fetched.body.unsigned !== undefined, traits.unsignedOnEvents);
      assert.equal(typeof fetched.body.unsigned?.age === "number", traits.unsignedOnEvents);
      const create = hs.timeline(roomId).find((e) => e.type === "m.room.create");
      assert.equal(create?.content["room_version"], traits.defaultRoomVersion);
      if (profile === "dendrite") assert.equal(traits.defaultRoomVersion, "10");
    });

    test("an unparsable since is refused, except by Continuwuity, which answers it with a full response", async () => {
      const { hs, token } = ctx;
      const roomId = "!garbled:localhost";
      hs.createRoom(roomId, [ALICE, LISA]);
      hs.sendText(roomId, ALICE, "history");
      const res = await sync(hs, token, { since: "not-a-token", timeout: 0 });
      if (traits.unknownSinceGetsFullResponse) {
        assert.equal(res.status, 200);
        assert.ok(roomId in res.body.rooms.join, "a full response");
      } else {
        assert.equal(res.status, 400);
      }
    });
  });
}
