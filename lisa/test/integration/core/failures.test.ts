// Failure handling end to end: rate limits,
// typing, LLM outages and rejected or failing sends each still lead to
// exactly one reply, and never to a second "send failed" message.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { stripReplyFallback } from "../../../src/invocation/classify.ts";
import type { RequestInfo } from "../../support/fake-homeserver.ts";
import { ALICE, BOB, CAROL, LISA, lisaReplies, ROOM1, ROOM2, until } from "../../support/lisa-harness.ts";
import { errorReply, jsonAnswer, type ScriptedResponse } from "../../support/scripted-llm.ts";
import { bodyOf, gate, logRecords, peekLedger, PROFILES, repliesTo, scenario, settle, waitForReply } from "./helpers.ts";

const RATE_LIMITED = { kind: "status", status: 429, errcode: "M_LIMIT_EXCEEDED", retryAfterMs: 300 } as const;
const GENERIC_ERROR = "Oh dear, my crystal ball is cloudy today. [Error: {error_code}]";

const isPasswordLogin = (r: RequestInfo): boolean => r.endpoint === "login" && r.method === "POST";

for (const profile of PROFILES) {
  describe(`failure handling (${profile})`, () => {
    test("429 with retry_after_ms on login, sync and send each still leads to exactly one reply", async () => {
      await scenario({ profile }, async ({ world, start }) => {
        world.hs.failNext(isPasswordLogin, RATE_LIMITED);
        const lisa = await start();
        assert.equal(world.hs.requests("login").filter((r) => r.status === 429).length, 1);
        await settle(world, ROOM1);

        await until(() => world.hs.activeSyncs === 1, 10_000, "Lisa long-polling");
        world.hs.failNext("sync", RATE_LIMITED);
        const afterSyncLimit = world.hs.sendText(ROOM1, ALICE, "Lisa, after a rate-limited sync");
        await waitForReply(world, ROOM1, afterSyncLimit);

        world.hs.failNext("send", RATE_LIMITED);
        const afterSendLimit = world.hs.sendText(ROOM2, BOB, "Lisa, your send will be rate-limited");
        await waitForReply(world, ROOM2, afterSendLimit);

        await settle(world, ROOM1);
        await settle(world, ROOM2);
        assert.equal(world.hs.pendingFaults, 0);
        assert.equal(world.hs.requests("sync").filter((r) => r.status === 429).length, 1);
        assert.equal(world.hs.requests("send").filter((r) => r.status === 429).length, 1);
        assert.equal(repliesTo(world, ROOM1, afterSyncLimit).length, 1);
        assert.equal(repliesTo(world, ROOM2, afterSendLimit).length, 1);
        assert.equal(lisa.store.invocation(afterSendLimit)?.status, "sent");
      });
    });

    test("typing starts while an invocation is processed and is cleared afterwards", async () => {
      const llmGate = gate();
      const script = async (): Promise<ScriptedResponse> => {
        await llmGate.wait();
        return jsonAnswer("Indeed, typed and answered.");
      };
      await scenario({ profile, llmScript: script }, async ({ world, start }) => {
        await start();
        const invoking = world.hs.sendText(ROOM1, CAROL, "Lisa, think hard about this one");
        await until(() => world.llm.requests.length === 1 && world.hs.isTyping(ROOM1, LISA), 15_000, "typing during the LLM request");
        assert.equal(lisaReplies(world, ROOM1).length, 0);
        const started = world.hs.typingHistory(ROOM1).find((r) => r.typing);
        assert.equal(started?.userId, LISA);
        assert.equal(started?.requestedTimeoutMs, 30_000);
        llmGate.open();
        await waitForReply(world, ROOM1, invoking);
        await until(() => !world.hs.isTyping(ROOM1, LISA), 10_000, "typing cleared");
        assert.equal(world.hs.typingHistory(ROOM1).at(-1)?.typing, false);
        assert.equal(world.hs.typingHistory(ROOM2).length, 0, "typing only where work happens");
      });
    });

    test("an LLM outage gives exactly one in-character fallback with the error code, and the next invocation succeeds", async () => {
      let failing = true;
      const script = (): ScriptedResponse => (failing ? errorReply(500) : jsonAnswer("Indeed, I am back."));
      await scenario({ profile, llmScript: script, config: { persona: { generic_error: GENERIC_ERROR } } }, async ({ world, start }) => {
        const lisa = await start();
        const during = world.hs.sendText(ROOM1, ALICE, "Lisa, are you there during the outage?");
        const fallback = await waitForReply(world, ROOM1, during);
        failing = false;
        assert.equal(stripReplyFallback(bodyOf(fallback)), "Oh dear, my crystal ball is cloudy today. [Error: llm_unavailable]");
        assert.ok(world.llm.requests.length > 1, "the LLM request was retried before giving up");
        const after = world.hs.sendText(ROOM1, BOB, "Lisa, and now?");
        const answer = await waitForReply(world, ROOM1, after);
        assert.match(bodyOf(answer), /Indeed, I am back\./);
        await settle(world, ROOM1);
        assert.equal(repliesTo(world, ROOM1, during).length, 1);
        assert.equal(repliesTo(world, ROOM1, after).length, 1);
        assert.equal(lisa.store.invocation(during)?.status, "sent");
        assert.ok(!world.logs.join("\n").includes("scripted error"), "no upstream error text in logs");
      });
    });

    test("a send the server rejects permanently stays ready_to_send with its error code while later invocations are answered", async () => {
      const sendInRoom2 = (r: RequestInfo): boolean => r.endpoint === "send" && r.path.includes(encodeURIComponent(ROOM2));
      await scenario({ profile }, async ({ world, start }) => {
        let lisa = await start();
        world.hs.failNext(sendInRoom2, { kind: "status", status: 403, errcode: "M_FORBIDDEN", error: "You may not post here" });
        const rejected = world.hs.sendText(ROOM2, ALICE, "Lisa, you may not answer this one");
        await until(() => lisa.store.invocation(rejected)?.lastErrorCode === "matrix_forbidden", 15_000, "the rejected send");
        const later = world.hs.sendText(ROOM2, BOB, "Lisa, but this one you may");
        await waitForReply(world, ROOM2, later);
        await settle(world, ROOM2);
        const row = lisa.store.invocation(rejected);
        assert.equal(row?.status, "ready_to_send");
        assert.ok(row?.responseJson !== null, "the exact payload is kept");
        assert.equal(world.hs.sentByTxn(row.matrixTxnId).length, 0);
        assert.equal(repliesTo(world, ROOM2, rejected).length, 0);
        assert.equal(lisaReplies(world, ROOM2).length, 2, "no 'send failed' message either");
        assert.ok(logRecords(world, "send_rejected").some((r) => r["code"] === "matrix_forbidden"));
        // The operator fixes the room and restarts: the stored reply goes out once.
        const llmBefore = world.llm.requests.length;
        await lisa.stop();
        lisa = await start();
        await waitForReply(world, ROOM2, rejected);
        await settle(world, ROOM2);
        assert.equal(repliesTo(world, ROOM2, rejected).length, 1);
        assert.equal(world.llm.requests.length, llmBefore + 1, "only the sentinel needed the LLM");
        assert.equal(peekLedger(world, (store) => store.invocation(later))?.status, "sent");
      });
    });

    test("a send failing transiently beyond the client's retries is resent later with the same payload, once", async () => {
      await scenario({ profile }, async ({ world, start }) => {
        const lisa = await start();
        world.hs.failNext("send", { kind: "status", status: 503, errcode: "M_UNKNOWN", error: "Service unavailable" }, { times: 4 });
        const invoking = world.hs.sendText(ROOM1, CAROL, "Lisa, answer through a flaky server");
        await until(() => lisa.store.invocation(invoking)?.lastErrorCode === "matrix_server_error", 20_000, "a failed send");
        await waitForReply(world, ROOM1, invoking);
        await settle(world, ROOM1);
        assert.equal(repliesTo(world, ROOM1, invoking).length, 1);
        assert.equal(world.llm.requests.length, 2, "the stored payload was resent, not regenerated");
        assert.equal(world.hs.requests("send").filter((r) => r.status === 503).length, 4);
      });
    });
  });
}
