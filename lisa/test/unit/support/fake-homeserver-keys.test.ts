// The fake's one key server serves both the encrypted-room path (LISA-E2EE:
// to-device messages and the `/sync` device part) and her identity
// (LISA-XSIGN-12: cross-signing keys, Continuwuity's count and fallback
// shapes), on every profile, over HTTP as Lisa's client sees it.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { HomeserverProfile } from "../../support/fake-homeserver.ts";
import { V3, call, login, loggedInServer, sync } from "../../support/fake-homeserver/test-client.ts";

const LISA = "@lisa:localhost";
const BOB = "@bob:localhost";
const PROFILES = ["synapse", "continuwuity", "dendrite"] as const satisfies readonly HomeserverProfile[];
const otk = (n: number): Record<string, unknown> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`signed_curve25519:K${i}`, { key: `k${i}`, signatures: {} }]));

for (const profile of PROFILES) {
  describe(`the fake's key server (${profile})`, () => {
    const ctx = loggedInServer(profile, LISA);

    test("the /sync one-time key count as the profile sends it: Synapse always, Continuwuity not for an empty pool, Dendrite once the device has keys", async () => {
      const { hs, token } = ctx;
      const before = (await sync(hs, token, { timeout: 0 })).body;
      if (profile === "synapse") assert.deepEqual(before.device_one_time_keys_count, { signed_curve25519: 0 });
      else assert.equal(before.device_one_time_keys_count, undefined);
      const upload = await call(hs, "POST", `${V3}/keys/upload`, { token, body: { device_keys: { user_id: LISA, device_id: "LISADEV", keys: {} }, one_time_keys: otk(2), fallback_keys: { "signed_curve25519:F": { key: "f", fallback: true } } } });
      assert.deepEqual(upload.body, { one_time_key_counts: { signed_curve25519: 2 } });
      const after = (await sync(hs, token, { timeout: 0 })).body;
      assert.deepEqual(after.device_one_time_keys_count, { signed_curve25519: 2 });
      assert.deepEqual(after.device_unused_fallback_key_types, ["signed_curve25519"]);
      assert.deepEqual(after.to_device, { events: [] });
    });

    test("LISA-XSIGN-12: a claim takes the one-time keys, then the fallback key, which is then no longer unused; Continuwuity then leaves the count out", async () => {
      const { hs, token } = ctx;
      const claim = async (): Promise<string> => {
        const res = await call(hs, "POST", `${V3}/keys/claim`, { token, body: { one_time_keys: { [LISA]: { LISADEV: "signed_curve25519" } } } });
        return Object.keys(res.body.one_time_keys[LISA].LISADEV)[0] as string;
      };
      assert.deepEqual([await claim(), await claim(), await claim()], ["signed_curve25519:K0", "signed_curve25519:K1", "signed_curve25519:F"]);
      const body = (await sync(hs, token, { timeout: 0 })).body;
      assert.deepEqual(body.device_unused_fallback_key_types, []);
      assert.deepEqual(body.device_one_time_keys_count, profile === "continuwuity" ? undefined : { signed_curve25519: 0 });
    });

    test("LISA-XSIGN-12: cross-signing keys show in /keys/query (user-signing only to their owner) and list her in device_lists.changed; a to-device message wakes a waiting /sync", async () => {
      const { hs, token } = ctx;
      hs.addUser(BOB, "bob-pw");
      const bob = (await login(hs, BOB, "bob-pw", { device_id: "BOBDEV" })).access_token as string;
      await call(hs, "POST", `${V3}/keys/upload`, { token: bob, body: { device_keys: { user_id: BOB, device_id: "BOBDEV", keys: {} } } });
      const first = (await sync(hs, bob, { timeout: 0 })).body;
      const since = first.next_batch as string;
      const master = { user_id: LISA, usage: ["master"], keys: { "ed25519:M": "M" } };
      const uploaded = await call(hs, "POST", `${V3}/keys/device_signing/upload`, { token, body: { master_key: master, self_signing_key: { user_id: LISA, usage: ["self_signing"], keys: { "ed25519:S": "S" } }, user_signing_key: { user_id: LISA, usage: ["user_signing"], keys: { "ed25519:U": "U" } } } });
      assert.equal(uploaded.status, 200);
      const asked = { device_keys: { [LISA]: [] } };
      const mine = (await call(hs, "POST", `${V3}/keys/query`, { token, body: asked })).body;
      const theirs = (await call(hs, "POST", `${V3}/keys/query`, { token: bob, body: asked })).body;
      assert.deepEqual(Object.keys(mine.device_keys[LISA]), ["LISADEV"]);
      assert.deepEqual(theirs.master_keys[LISA], master);
      assert.ok(mine.user_signing_keys[LISA] !== undefined && theirs.user_signing_keys[LISA] === undefined);
      const waiting = sync(hs, bob, { since, timeout: 10_000 });
      await call(hs, "PUT", `${V3}/sendToDevice/m.room_key_request/txn1`, { token, body: { messages: { [BOB]: { "*": { hello: 1 } } } } });
      const woken = (await waiting).body;
      assert.deepEqual(woken.to_device.events, [{ type: "m.room_key_request", sender: LISA, content: { hello: 1 } }]);
      assert.ok(woken.device_lists.changed.includes(LISA), "her identity upload listed her as changed");
    });
  });
}
