import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { startFakeHomeserver } from "../../support/fake-homeserver.ts";
import type { FakeHomeserver, HomeserverProfile } from "../../support/fake-homeserver.ts";
import { traitsOf } from "../../support/fake-homeserver/traits.ts";
import { V3, call, login, seg, sync, loggedInServer } from "../../support/fake-homeserver/test-client.ts";

const LISA = "@lisa:localhost";
const ALICE = "@alice:localhost";


const sendPath = (roomId: string, txnId: string): string => `${V3}/rooms/${seg(roomId)}/send/m.room.message/${seg(txnId)}`;
const whoami = (hs: FakeHomeserver, token: string) => call(hs, "GET", `${V3}/account/whoami`, { token });

for (const profile of ["synapse", "continuwuity", "dendrite"] as const satisfies readonly HomeserverProfile[]) {
  describe(`fake homeserver faults (${profile})`, () => {
    const ctx = loggedInServer(profile, LISA);

    test("a status fault answers 429 M_LIMIT_EXCEEDED with retry_after_ms and Retry-After, once", async () => {
      const { hs, token } = ctx;
      hs.failNext("whoami", { kind: "status", status: 429, errcode: "M_LIMIT_EXCEEDED", retryAfterMs: 1500 });
      const limited = await whoami(hs, token);
      assert.equal(limited.status, 429);
      assert.equal(limited.body.errcode, "M_LIMIT_EXCEEDED");
      assert.equal(limited.body.retry_after_ms, 1500);
      assert.equal(limited.headers.get("retry-after"), "2");
      assert.equal((await whoami(hs, token)).status, 200);
      assert.equal(hs.pendingFaults, 0);
      assert.equal(hs.requests("whoami").at(-2)?.fault, "status");
    });

    test("a status fault with times fails that many matching requests, then succeeds", async () => {
      const { hs, token } = ctx;
      hs.failNext("whoami", { kind: "status", status: 502, errcode: "M_UNKNOWN" }, { times: 2 });
      assert.equal((await whoami(hs, token)).status, 502);
      const second = await whoami(hs, token);
      assert.equal(second.status, 502);
      assert.deepEqual(Object.keys(second.body).sort(), ["errcode", "error"]);
      assert.equal((await whoami(hs, token)).status, 200);
    });

    test("faults only hit the requests their matcher selects", async () => {
      const { hs, token } = ctx;
      hs.createRoom("!m1:localhost", [ALICE, LISA]);
      hs.createRoom("!m2:localhost", [ALICE, LISA]);
      hs.failNext((r) => r.endpoint === "send" && r.path.includes(seg("!m2:localhost")), { kind: "status", status: 500, errcode: "M_UNKNOWN" });
      assert.equal((await whoami(hs, token)).status, 200);
      const ok = await call(hs, "PUT", sendPath("!m1:localhost", "pm1"), { token, body: { msgtype: "m.text", body: "a" } });
      assert.equal(ok.status, 200);
      const failed = await call(hs, "PUT", sendPath("!m2:localhost", "pm2"), { token, body: { msgtype: "m.text", body: "b" } });
      assert.equal(failed.status, 500);
      assert.equal(hs.sentByTxn("pm2").length, 0);
      hs.failNext("sync", { kind: "unknownPos" });
      hs.clearFaults();
      assert.equal(hs.pendingFaults, 0);
    });

    test("a drop fault destroys the socket without applying the request", async () => {
      const { hs, token } = ctx;
      hs.createRoom("!drop:localhost", [ALICE, LISA]);
      hs.failNext("send", { kind: "drop" });
      await assert.rejects(call(hs, "PUT", sendPath("!drop:localhost", "dropped"), { token, body: { msgtype: "m.text", body: "lost" } }));
      assert.equal(hs.sentByTxn("dropped").length, 0);
      assert.equal(hs.requests("send").at(-1)?.status, "dropped");
      const retry = await call(hs, "PUT", sendPath("!drop:localhost", "dropped"), { token, body: { msgtype: "m.text", body: "lost" } });
      assert.equal(retry.status, 200);
      assert.equal(hs.sentByTxn("dropped").length, 1);
    });

    test("dropAfterCommit stores the event, then the retry with the same txn id gets the same event id", async () => {
      const { hs, token } = ctx;
      const roomId = "!commit:localhost";
      hs.createRoom(roomId, [ALICE, LISA]);
      hs.failNext("send", { kind: "dropAfterCommit" });
      const content = { msgtype: "m.text", body: "exactly once" };
      await assert.rejects(call(hs, "PUT", sendPath(roomId, "commit_txn"), { token, body: content }));
      const stored = hs.sentByTxn("commit_txn");
      assert.equal(stored.length, 1);
      const retry = await call(hs, "PUT", sendPath(roomId, "commit_txn"), { token, body: content });
      assert.equal(retry.status, 200);
      assert.equal(retry.body.event_id, stored[0]?.event_id);
      assert.equal(hs.sentByTxn("commit_txn").length, 1);
      assert.equal(hs.eventsBy(LISA, roomId).filter((e) => e.type === "m.room.message").length, 1);
    });

    test("unknownPos answers sync with 400 M_UNKNOWN_POS, or (Continuwuity) with 200 and a full response", async () => {
      const { hs, token } = ctx;
      const roomId = "!unknownpos:localhost";
      hs.createRoom(roomId, [ALICE, LISA]);
      hs.sendText(roomId, ALICE, "said before the cursor");
      const first = await sync(hs, token, { timeout: 0 });
      hs.failNext("sync", { kind: "unknownPos" });
      const res = await sync(hs, token, { since: first.body.next_batch, timeout: 0 });
      if (traitsOf(profile).unknownSinceGetsFullResponse) {
        assert.equal(res.status, 200);
        const events = res.body.rooms.join[roomId].timeline.events as { content: { body?: string } }[];
        assert.ok(events.some((e) => e.content.body === "said before the cursor"), "the full response repeats what preceded the cursor");
      } else {
        assert.equal(res.status, 400);
        assert.equal(res.body.errcode, "M_UNKNOWN_POS");
      }
    });

    test("repeatLastSync serves the previous sync response again, as after a lost connection", async () => {
      const { hs, token } = ctx;
      const roomId = "!repeat:localhost";
      hs.createRoom(roomId, [ALICE, LISA]);
      const first = await sync(hs, token, { timeout: 0 });
      hs.sendText(roomId, ALICE, "once");
      const second = await sync(hs, token, { since: first.body.next_batch, timeout: 0 });
      hs.sendText(roomId, ALICE, "twice");
      hs.failNext("sync", { kind: "repeatLastSync" });
      const repeated = await sync(hs, token, { since: second.body.next_batch, timeout: 0 });
      assert.deepEqual(repeated.body, second.body);
      const next = await sync(hs, token, { since: second.body.next_batch, timeout: 0 });
      assert.deepEqual(next.body.rooms.join[roomId].timeline.events.map((e: { content: { body: string } }) => e.content.body), ["twice"]);
    });

    test("a sync dropped after commit is what repeatLastSync serves next", async () => {
      const { hs, token } = ctx;
      const roomId = "!lostsync:localhost";
      hs.createRoom(roomId, [ALICE, LISA]);
      const first = await sync(hs, token, { timeout: 0 });
      hs.sendText(roomId, ALICE, "in flight");
      hs.failNext("sync", { kind: "dropAfterCommit" });
      await assert.rejects(sync(hs, token, { since: first.body.next_batch, timeout: 0 }));
      hs.failNext("sync", { kind: "repeatLastSync" });
      const replayed = await sync(hs, token, { since: first.body.next_batch, timeout: 0 });
      assert.deepEqual(replayed.body.rooms.join[roomId].timeline.events.map((e: { content: { body: string } }) => e.content.body), ["in flight"]);
    });

    test("expireToken invalidates the presented token with 401 M_UNKNOWN_TOKEN", async () => {
      const { hs } = ctx;
      const session = await login(hs, LISA, "pw", { device_id: "EXPIRING", refresh_token: true });
      hs.failNext("whoami", { kind: "expireToken" });
      const res = await whoami(hs, session.access_token);
      assert.equal(res.status, 401);
      assert.equal(res.body.errcode, "M_UNKNOWN_TOKEN");
      assert.equal(res.body.soft_logout, profile === "synapse");
      assert.equal((await whoami(hs, session.access_token)).status, 401);
      hs.setClockOffset(-86_400_000);
      try {
        assert.equal((await whoami(hs, session.access_token)).status, 401, "stays expired when the clock is moved back");
      } finally {
        hs.setClockOffset(0);
      }
      if (profile === "synapse") {
        const refreshed = await call(hs, "POST", `${V3}/refresh`, { body: { refresh_token: session.refresh_token } });
        assert.equal(refreshed.status, 200);
        assert.equal((await whoami(hs, refreshed.body.access_token)).status, 200);
      } else {
        const again = await login(hs, LISA, "pw", { device_id: "EXPIRING" });
        assert.equal((await whoami(hs, again.access_token)).status, 200);
      }
    });

    test("close() ends a pending long-poll and every socket", async () => {
      const hs = await startFakeHomeserver({ profile });
      hs.addUser(LISA, "pw");
      const token = (await login(hs, LISA, "pw")).access_token;
      const first = await sync(hs, token, { timeout: 0 });
      const pending = sync(hs, token, { since: first.body.next_batch, timeout: 30_000 }).then(
        (res) => res.status,
        () => "rejected",
      );
      await hs.waitFor((s) => s.activeSyncs === 1);
      await hs.close();
      assert.ok(["rejected", 200].includes(await pending));
      assert.equal(hs.activeSyncs, 0);
    });

    test("waitFor resolves when the predicate holds and rejects when its signal aborts", async () => {
      const { hs } = ctx;
      hs.createRoom("!wait:localhost", [ALICE, LISA]);
      const waiting = hs.waitFor((s) => s.eventsBy(ALICE, "!wait:localhost").some((e) => e.content["body"] === "ping"));
      hs.sendText("!wait:localhost", ALICE, "ping");
      await waiting;
      const controller = new AbortController();
      const never = hs.waitFor(() => false, controller.signal);
      controller.abort();
      await assert.rejects(never, /waitFor condition not met/);
      assert.deepEqual(hs.internalErrors, []);
    });
  });
}
