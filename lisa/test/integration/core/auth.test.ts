// The authentication lifecycle end to end: token refresh, password re-login with the same device
// and no replacement baseline, and the permanent failures that stop Lisa with
// exit status 78 without sending anything.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { matrixTransactionId } from "../../../src/state/txn-id.ts";
import { CANARY } from "../../support/config.ts";
import { ALICE, BOB, CAROL, lisaReplies, LISA, ROOM1, ROOM2, startChild, until, type World } from "../../support/lisa-harness.ts";
import { jsonAnswer, type ScriptedResponse } from "../../support/scripted-llm.ts";
import { logRecords, outputEnded, peekLedger, PROFILES, repliesTo, scenario, settle, waitForReply, within } from "./helpers.ts";

/** Sync requests made without `since` (each one is a baseline). */
function baselineSyncs(world: World): number {
  return world.hs.requests("sync").filter((r) => r.query["since"] === undefined).length;
}

/** Lisa's device ids on the server. */
function lisaDevices(world: World): string[] {
  return world.hs.devices(LISA).map((d) => d.deviceId);
}

/** Every text a leak could hide in: logs, child output, room events. */
function assertNoCanary(world: World, extra = ""): void {
  const everything = [...world.logs, extra, ...[ROOM1, ROOM2].flatMap((r) => world.hs.timeline(r).map((e) => JSON.stringify(e)))].join("\n");
  for (const canary of Object.values(CANARY)) assert.ok(!everything.includes(canary), "a secret canary leaked");
}

describe("token refresh (synapse, short-lived refreshable tokens)", () => {
  test("several invocations across token refreshes are each answered once, with one login and one baseline", async () => {
    await scenario({ profile: "synapse", homeserver: { accessTokenLifetimeMs: 1_500 } }, async ({ world, start }) => {
      const lisa = await start();
      const rooms = [ROOM1, ROOM2, ROOM1, ROOM2];
      const invocations: [string, string][] = [];
      for (const [i, room] of rooms.entries()) {
        const id = world.hs.sendText(room, i % 2 === 0 ? ALICE : BOB, `Lisa, question ${i} across token lifetimes`);
        invocations.push([room, id]);
        await waitForReply(world, room, id);
        await until(() => world.hs.refreshCount > i, 15_000, `refresh number ${i + 1}`);
      }
      await settle(world, ROOM1);
      for (const [room, id] of invocations) {
        assert.equal(repliesTo(world, room, id).length, 1);
        const row = lisa.store.invocation(id);
        assert.equal(row?.matrixTxnId, matrixTransactionId(room, id), "transaction ids do not depend on tokens");
        assert.equal(world.hs.sentByTxn(row.matrixTxnId).length, 1);
      }
      assert.ok(world.hs.refreshCount >= rooms.length);
      assert.equal(world.hs.loginCount, 1);
      assert.equal(baselineSyncs(world), 1, "the sync position survived every refresh");
      assert.deepEqual(world.hs.devices(LISA), [{ deviceId: "LISATEST", displayName: "Lisa bot" }], "the configured device and its display name");
    });
  });

  test("an access token that expires under a send is refreshed once and the send resumes", async () => {
    await scenario({ profile: "synapse" }, async ({ world, start }) => {
      await start();
      world.hs.failNext("send", { kind: "expireToken" });
      const invoking = world.hs.sendText(ROOM1, CAROL, "Lisa, answer through an expired token");
      await waitForReply(world, ROOM1, invoking);
      await settle(world, ROOM1);
      assert.equal(repliesTo(world, ROOM1, invoking).length, 1);
      assert.equal(world.hs.refreshCount, 1);
      assert.equal(world.hs.loginCount, 1);
      assert.deepEqual(world.hs.requests("send").slice(0, 2).map((r) => r.status), [401, 200]);
    });
  });

  test("a rejected refresh token leads to password login with the same device and no new baseline", async () => {
    const homeserver = { accessTokenLifetimeMs: 1_500, refreshTokenLifetimeMs: 300 };
    await scenario({ profile: "synapse", homeserver }, async ({ world, start }) => {
      await start();
      const first = world.hs.sendText(ROOM1, ALICE, "Lisa, before the refresh token expires");
      await waitForReply(world, ROOM1, first);
      await until(() => world.hs.loginCount >= 2, 15_000, "a password re-login");
      const second = world.hs.sendText(ROOM2, BOB, "Lisa, after the re-login");
      await waitForReply(world, ROOM2, second);
      await settle(world, ROOM1);
      assert.equal(repliesTo(world, ROOM1, first).length, 1);
      assert.equal(repliesTo(world, ROOM2, second).length, 1);
      assert.equal(world.hs.refreshCount, 0, "every refresh was rejected");
      assert.ok(logRecords(world, "matrix_refresh_rejected").length >= 1);
      assert.deepEqual(lisaDevices(world), ["LISATEST"]);
      assert.equal(baselineSyncs(world), 1);
    });
  });
});

for (const profile of PROFILES) {
  describe(`re-authentication and permanent failures (${profile})`, () => {
    test("invalidated access tokens are renewed (synapse: refresh, continuwuity: password login, same device) without a new baseline", async () => {
      await scenario({ profile }, async ({ world, start }) => {
        await start();
        const first = world.hs.sendText(ROOM1, ALICE, "Lisa, before the tokens die");
        await waitForReply(world, ROOM1, first);
        world.hs.expireAccessTokens(LISA);
        const second = world.hs.sendText(ROOM1, BOB, "Lisa, after the tokens died");
        await waitForReply(world, ROOM1, second);
        await settle(world, ROOM1);
        assert.equal(repliesTo(world, ROOM1, first).length, 1);
        assert.equal(repliesTo(world, ROOM1, second).length, 1);
        if (profile === "synapse") {
          assert.equal(world.hs.refreshCount, 1);
          assert.equal(world.hs.loginCount, 1);
        } else {
          assert.equal(world.hs.loginCount, 2, "continuwuity has no refresh tokens: password login again");
          assert.ok(logRecords(world, "matrix_token_rejected").length >= 1);
        }
        assert.deepEqual(lisaDevices(world), ["LISATEST"]);
        assert.equal(baselineSyncs(world), 1, "the sync `since` continued");
      });
    });

    test("a wrong password at startup ends the service with 78 before any sync", async () => {
      await scenario({ profile }, async ({ world, launch }) => {
        world.hs.setPassword(LISA, "not-the-configured-password");
        const lisa = launch();
        assert.equal(await within(lisa.done, 20_000, "the service to stop"), 78);
        assert.equal(world.hs.requests("sync").length, 0);
        assert.equal(world.hs.requests("send").length, 0);
        assert.ok(logRecords(world, "matrix_auth_failed").some((r) => r["code"] === "matrix_login_failed"));
        assertNoCanary(world);
      });
    });

    test("a password changed while Lisa runs ends the service with 78, sends nothing, and keeps the invocation for a later start", async () => {
      const script = (_request: unknown, index: number): ScriptedResponse => ({ ...jsonAnswer(`Indeed, answer ${index + 1}.`), delayMs: index === 0 ? 1_000 : 0 });
      await scenario({ profile, llmScript: script }, async ({ world, start }) => {
        let lisa = await start();
        const invoking = world.hs.sendText(ROOM1, ALICE, "Lisa, answer while your password changes");
        await until(() => world.llm.requests.length === 1, 15_000, "the LLM request");
        world.hs.setPassword(LISA, "rotated-by-the-operator", { logoutDevices: true });
        assert.equal(await within(lisa.done, 30_000, "the service to stop"), 78);
        assert.equal(lisaReplies(world, ROOM1).length, 0, "nothing was sent");
        const row = peekLedger(world, (store) => store.invocation(invoking));
        assert.ok(row?.status === "candidate" || row?.status === "ready_to_send", `still pending (${row?.status})`);
        assertNoCanary(world);
        world.hs.setPassword(LISA, CANARY.matrixPassword);
        lisa = await start();
        await waitForReply(world, ROOM1, invoking);
        await settle(world, ROOM1);
        assert.equal(repliesTo(world, ROOM1, invoking).length, 1);
      });
    });

    test("an identity mismatch between configuration and /whoami ends the service with 78 and sends nothing", async () => {
      // The server canonicalises the configured "@Lisa:localhost" to "@lisa:localhost".
      await scenario({ profile, config: { matrix: { user_id: "@Lisa:localhost" } } }, async ({ world, launch }) => {
        world.hs.sendText(ROOM1, ALICE, "Lisa, are you who you say you are?");
        const lisa = launch();
        assert.equal(await within(lisa.done, 20_000, "the service to stop"), 78);
        assert.ok(world.hs.requests("whoami").length >= 1);
        assert.equal(world.hs.requests("sync").length, 0);
        assert.equal(world.hs.requests("send").length, 0);
        assert.ok(logRecords(world, "matrix_auth_failed").some((r) => r["code"] === "matrix_identity_mismatch"));
      });
    });
  });
}

describe("permanent failures of the `lisa run` child process", () => {
  test("a password changed while the child runs makes it exit with 78 and send nothing", async () => {
    await scenario({ profile: "continuwuity" }, async ({ world }) => {
      const lisa = startChild(world);
      try {
        await until(() => peekLedger(world, (store) => store.syncState().initialized), 30_000, "the child's baseline");
        world.hs.setPassword(LISA, "rotated-by-the-operator", { logoutDevices: true });
        world.hs.sendText(ROOM1, ALICE, "Lisa, are you there?");
        const exit = await within(lisa.exited, 30_000, "the child to exit");
        await outputEnded(lisa.child);
        assert.equal(exit.code, 78);
        assert.equal(lisaReplies(world, ROOM1).length, 0);
        assertNoCanary(world, lisa.output.stdout + lisa.output.stderr);
      } finally {
        if (lisa.child.exitCode === null && lisa.child.signalCode === null) lisa.child.kill("SIGKILL");
        await lisa.exited;
      }
    });
  });

  test("an identity mismatch makes the child exit with 78 before any sync", async () => {
    await scenario({ profile: "synapse", config: { matrix: { user_id: "@Lisa:localhost" } } }, async ({ world }) => {
      const lisa = startChild(world);
      try {
        const exit = await within(lisa.exited, 30_000, "the child to exit");
        await outputEnded(lisa.child);
        assert.equal(exit.code, 78);
        assert.equal(world.hs.requests("sync").length, 0);
        assert.equal(world.hs.requests("send").length, 0);
        assertNoCanary(world, lisa.output.stdout + lisa.output.stderr);
      } finally {
        if (lisa.child.exitCode === null && lisa.child.signalCode === null) lisa.child.kill("SIGKILL");
        await lisa.exited;
      }
    });
  });
});
