import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ok } from "../../../src/errors.ts";
import { aliasMatcher } from "../../../src/invocation/classify.ts";
import { createInvocationWorker, fallbackText, type WorkerStore } from "../../../src/invocation/worker.ts";
import { silentLogger } from "../../../src/log/logger.ts";
import type { InvocationRow } from "../../../src/state/types.ts";

const ROOM = "!room1:localhost";
const LISA = "@lisa:localhost";
const settings = {
  selfUserId: LISA, allowedRoomIds: new Set([ROOM]), mentionAliases: ["Lisa"], invocationTimeoutMs: 5_000,
  genericError: "Oops [Error: {error_code}]", overloadError: "Too much at once.", maxAttempts: 3,
};

function row(attemptCount: number): InvocationRow {
  const event = { event_id: "$e1", room_id: ROOM, type: "m.room.message", sender: "@alice:localhost", origin_server_ts: 1, content: { msgtype: "m.text", body: "Lisa?" } };
  return {
    eventId: "$e1", roomId: ROOM, senderId: "@alice:localhost", receivedAtMs: 1, status: "processing", rawEventJson: JSON.stringify(event),
    responseJson: null, matrixTxnId: "lisa_txn", sentEventId: null, attemptCount, availableAtMs: 0, lastErrorCode: null, updatedAtMs: 0,
  };
}

function harness() {
  const calls: string[] = [];
  let ready = "";
  const store = {
    markIgnored: () => calls.push("ignored"),
    commitReady: (_id: string, payload: string) => { ready = payload; calls.push("ready"); },
    markSent: () => calls.push("sent"),
    recordSendFailure: () => calls.push("send_failed"),
    releaseLease: () => { calls.push("released"); return true; },
    roomCursor: () => null,
    replyStream: () => null,
  } as unknown as WorkerStore;
  let responded = 0;
  const worker = createInvocationWorker({
    store,
    room: { sendMessage: async () => ok("$sent"), setTyping: async () => ok(undefined), tokenGeneration: () => 1 },
    sentLookup: async () => ok(null),
    replyTarget: async () => "other",
    matchesAlias: (() => { const matches = aliasMatcher(["Lisa"], LISA); return (_room: string, text: string) => matches(text); })(),
    respond: async () => { responded += 1; return ok({ markdown: "answer", sources: [] }); },
    render: { reply: (d) => ({ body: d.markdown }), fallback: (text) => ({ body: text }) },
    settings,
    log: silentLogger,
  });
  return { worker, calls, ready: () => ready, responded: () => responded };
}

describe("processing attempts", () => {
  test("a candidate within its attempt budget is answered normally", async () => {
    const h = harness();
    await h.worker({ kind: "process", invocation: row(3) }, new AbortController().signal);
    assert.equal(h.responded(), 1);
    assert.deepEqual(h.calls, ["ready", "sent"]);
    assert.equal(JSON.parse(h.ready()).body, "answer");
  });

  test("a candidate leased more often than the budget gets the in-character fallback, exactly once", async () => {
    const h = harness();
    await h.worker({ kind: "process", invocation: row(4) }, new AbortController().signal);
    assert.equal(h.responded(), 0, "the model is not asked again");
    assert.deepEqual(h.calls, ["ready", "sent"]);
    assert.equal(JSON.parse(h.ready()).body, "Oops [Error: attempts_exhausted]");
  });

  test("overload codes get the overload text, others the generic text with the code", () => {
    assert.equal(fallbackText(settings, "invocation_limit"), "Too much at once.");
    assert.equal(fallbackText(settings, "llm_unavailable"), "Oops [Error: llm_unavailable]");
  });
});
