// The invocation worker's single error boundary over a real ledger with fake room, responder and renderer ports:
// classify, type, answer or fall back, persist the exact payload, send it
// under the deterministic transaction id, and hand the lease back on shutdown.
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { err, LisaError, ok, type Result } from "../../../src/errors.ts";
import { SEND_REJECTED_RETRY_MS, SEND_RETRY_BASE_MS } from "../../../src/invocation/backoff.ts";
import { REPLY_MARKER_KEY } from "../../../src/invocation/sent-lookup.ts";
import { TypingLease } from "../../../src/invocation/typing.ts";
import { createInvocationWorker, fallbackText, type ReplyDraft, type Responder, type WorkerDeps } from "../../../src/invocation/worker.ts";
import { MatrixError } from "../../../src/matrix/errors.ts";
import type { RawEvent, RoomWritePort } from "../../../src/matrix/port.ts";
import { matrixTransactionId } from "../../../src/state/txn-id.ts";
import type { StateStore, WorkItem } from "../../../src/state/types.ts";
import { baseline, openRun, replyPayload, tempDatabase, testClock, type TestClock } from "../../support/state-fixtures.ts";
import { recordingLogger } from "../ingest/fakes.ts";

const LISA = "@lisa:example.org";
const ROOM = "!room-a:example.org";
const SETTINGS = {
  selfUserId: LISA, allowedRoomIds: new Set([ROOM]), mentionAliases: ["Lisa"], invocationTimeoutMs: 60_000,
  genericError: "Oops, tangled. [Error: {error_code}]", overloadError: "Too much at once.", maxAttempts: 3,
};

function eventOf(n: number, content: Record<string, unknown>): RawEvent {
  return { event_id: `$ev${n}:example.org`, room_id: ROOM, type: "m.room.message", sender: "@alice:example.org", origin_server_ts: 1_700_000_000_000 + n, content };
}
const mention = (n: number): RawEvent => eventOf(n, { msgtype: "m.text", body: `Lisa, question ${n}?` });

/** A room port that records every call in order and answers from scripts. */
class FakeRoom implements RoomWritePort {
  readonly calls: string[] = [];
  readonly sent: { txnId: string; content: Readonly<Record<string, unknown>> }[] = [];
  sendResult: () => Result<string, MatrixError> = () => ok(`$reply${this.sent.length}:example.org`);
  typingResult: () => Result<void, MatrixError> = () => ok(undefined);
  /** The access-token generation the port reports (a test bumps it to model a new login). */
  generation = 1;

  tokenGeneration(): number {
    return this.generation;
  }

  async sendMessage(roomId: string, txnId: string, content: Readonly<Record<string, unknown>>): Promise<Result<string, MatrixError>> {
    this.calls.push(`send ${roomId}`);
    this.sent.push({ txnId, content });
    return this.sendResult();
  }

  async setTyping(roomId: string, typing: boolean): Promise<Result<void, MatrixError>> {
    this.calls.push(`typing ${typing}`);
    return this.typingResult();
  }
}

const matrixError = (code: string, retryable: boolean): MatrixError => new MatrixError(code, { errcode: null, httpStatus: null, retryAfterMs: null }, retryable);
const answer = (markdown: string): Responder => async () => ok<ReplyDraft>({ markdown, sources: [] });

describe("invocation worker", () => {
  let db: ReturnType<typeof tempDatabase>;
  let clock: TestClock;
  let store: StateStore;
  let room: FakeRoom;
  let log: ReturnType<typeof recordingLogger>;
  let respondCalls: number;
  let lookups: { roomId: string; eventId: string; txnId: string }[];

  beforeEach(() => {
    lookups = [];
    db = tempDatabase();
    clock = testClock();
    store = openRun(db.path, clock);
    baseline(store, [ROOM]);
    room = new FakeRoom();
    log = recordingLogger();
    respondCalls = 0;
  });
  afterEach(() => {
    store.close();
    db.cleanup();
  });

  function worker(respond: Responder, overrides: Partial<WorkerDeps> = {}) {
    return createInvocationWorker({
      store, room, log, now: clock.now, settings: SETTINGS,
      replyTarget: async () => "other",
      matchesAlias: (_room, text) => /\blisa\b/i.test(text),
      respond: async (event, signal) => {
        respondCalls += 1;
        return respond(event, signal);
      },
      render: { reply: (draft) => ({ msgtype: "m.text", body: draft.markdown }), fallback: (text) => ({ msgtype: "m.text", body: `fallback: ${text}` }) },
      sentLookup: async (roomId, eventId, txnId) => {
        lookups.push({ roomId, eventId, txnId });
        return ok(null);
      },
      ...overrides,
    });
  }

  /** Records `event` as a candidate and leases it. */
  function lease(event: RawEvent, rawEventJson = JSON.stringify(event)): WorkItem {
    store.commitSyncBatch({
      nextBatch: "s1", rooms: [],
      candidates: [{ eventId: event.event_id, roomId: ROOM, senderId: event.sender, receivedAtMs: event.origin_server_ts, rawEventJson }],
    });
    const item = store.nextForRoom(ROOM, 60_000);
    if (item === null) throw new Error("nothing to lease");
    return item;
  }

  const live = new AbortController().signal;

  test("an accepted mention types, answers, sends the committed payload under its transaction id, then clears typing", async () => {
    const event = mention(1);
    await worker(answer("Indeed."))(lease(event), live);
    assert.deepEqual(room.calls, ["typing true", `send ${ROOM}`, "typing false"]);
    const txnId = matrixTransactionId(ROOM, event.event_id);
    assert.deepEqual(room.sent, [{ txnId, content: { msgtype: "m.text", body: "Indeed.", [REPLY_MARKER_KEY]: txnId } }]);
    const row = store.invocation(event.event_id);
    assert.equal(row?.status, "sent");
    assert.equal(row?.sentEventId, "$reply1:example.org");
    assert.ok(store.isBotEvent("$reply1:example.org", ROOM));
  });

  test("the permit is handed back once the reply is durable, before it is sent", async () => {
    const event = mention(11);
    const seen: string[] = [];
    const releasePermit = (): void => {
      seen.push(`permit released with the row ${store.invocation(event.event_id)?.status ?? "missing"}`);
    };
    const send = room.sendMessage.bind(room);
    room.sendMessage = async (...args) => {
      seen.push("send");
      return send(...args);
    };
    await worker(answer("Indeed."))(lease(event), live, releasePermit);
    assert.deepEqual(seen, ["permit released with the row ready_to_send", "send"]);
    assert.equal(store.invocation(event.event_id)?.status, "sent");
  });

  test("a stored reply being resent holds no permit, and an ignored candidate hands it back too", async () => {
    const ignoredEvent = eventOf(12, { msgtype: "m.text", body: "no mention here" });
    let released = 0;
    await worker(answer("never"))(lease(ignoredEvent), live, () => (released += 1));
    assert.equal(released, 1);
    const event = mention(13);
    lease(event);
    store.commitReady(event.event_id, replyPayload("stored"));
    const stored = store.invocation(event.event_id);
    if (stored === null) throw new Error("row missing");
    let releasedBeforeSend = false;
    room.sendResult = () => {
      releasedBeforeSend = released === 2;
      return ok("$resent:example.org");
    };
    await worker(answer("never"))({ kind: "send", invocation: stored }, live, () => (released += 1));
    assert.equal(releasedBeforeSend, true);
    assert.equal(store.invocation(event.event_id)?.status, "sent");
  });

  test("a candidate that is no invocation is ignored with its reason: no typing, no LLM, no send", async () => {
    const event = eventOf(2, { msgtype: "m.text", body: "Elisabeth, hello" });
    await worker(answer("never"))(lease(event), live);
    assert.deepEqual(room.calls, []);
    assert.equal(respondCalls, 0);
    assert.equal(store.invocation(event.event_id)?.status, "ignored");
    assert.equal(store.invocation(event.event_id)?.lastErrorCode, "no_mention");
  });

  test("a stored event that cannot be parsed is ignored as malformed and never reaches the LLM", async () => {
    const event = mention(3);
    await worker(answer("never"))(lease(event, JSON.stringify({ event_id: event.event_id })), live);
    assert.equal(store.invocation(event.event_id)?.lastErrorCode, "malformed_event");
    assert.equal(respondCalls, 0);
  });

  test("a reply whose target cannot be verified yet is deferred, and ignored once the attempts are spent", async () => {
    const replyTo = (n: number): RawEvent => eventOf(n, { msgtype: "m.text", body: "and then?", "m.relates_to": { "m.in_reply_to": { event_id: "$t:example.org" } } });
    const deferred = replyTo(4);
    await worker(answer("never"), { replyTarget: async () => "unavailable" })(lease(deferred), live);
    const row = store.invocation(deferred.event_id);
    assert.equal(row?.status, "candidate");
    assert.equal(row?.lastErrorCode, "reply_target_unavailable");
    assert.equal(row?.availableAtMs, clock.now() + 10_000);
    store.markIgnored(deferred.event_id, "no_mention");
    const spent = replyTo(5);
    await worker(answer("never"), { replyTarget: async () => "unavailable", settings: { ...SETTINGS, maxAttempts: 1 } })(lease(spent), live);
    assert.equal(store.invocation(spent.event_id)?.status, "ignored");
    assert.equal(respondCalls, 0);
  });

  test("a reply to Lisa's message is answered without a mention", async () => {
    const event = eventOf(6, { msgtype: "m.text", body: "and then?", "m.relates_to": { "m.in_reply_to": { event_id: "$mine:example.org" } } });
    await worker(answer("Then this."), { replyTarget: async () => "lisa" })(lease(event), live);
    assert.equal(store.invocation(event.event_id)?.status, "sent");
  });

  test("a failed answer becomes the persona's in-character error with only the code", async () => {
    const event = mention(7);
    await worker(async () => err(new LisaError("llm_unavailable", "upstream said: secret details")))(lease(event), live);
    assert.deepEqual(room.sent[0]?.content, {
      msgtype: "m.text", body: "fallback: Oops, tangled. [Error: llm_unavailable]", [REPLY_MARKER_KEY]: room.sent[0]?.txnId,
    });
    assert.equal(store.invocation(event.event_id)?.status, "sent");
    assert.ok(log.lines.some((l) => l.event === "invocation_failed" && l.fields["code"] === "llm_unavailable"));
  });

  test("a responder that throws still yields the fallback and logs only a code", async () => {
    const event = mention(8);
    await worker(async () => {
      throw new Error("prompt text that must not leak");
    })(lease(event), live);
    assert.equal(room.sent[0]?.content["body"], "fallback: Oops, tangled. [Error: internal_error]");
    assert.ok(log.lines.some((l) => l.event === "responder_crashed" && l.level === "error"));
    assert.ok(!JSON.stringify(log.lines).includes("prompt text"));
  });

  test("the invocation deadline ends in the fallback, not in a release", async () => {
    const event = mention(9);
    const waitForAbort: Responder = async (_e, signal) => {
      while (!signal.aborted) await delay(2);
      return err(new LisaError("invocation_timeout", "deadline"));
    };
    await worker(waitForAbort, { settings: { ...SETTINGS, invocationTimeoutMs: 30 } })(lease(event), live);
    assert.equal(room.sent[0]?.content["body"], "fallback: Oops, tangled. [Error: invocation_timeout]");
    assert.equal(store.invocation(event.event_id)?.status, "sent");
  });

  test("a shutdown during the answer hands the lease back, clears typing and sends nothing", async () => {
    const event = mention(10);
    const stop = new AbortController();
    const waitForAbort: Responder = async (_e, signal) => {
      while (!signal.aborted) await delay(2);
      return err(new LisaError("invocation_cancelled", "cancelled"));
    };
    const running = worker(waitForAbort)(lease(event), stop.signal);
    while (respondCalls === 0) await delay(2);
    stop.abort(new Error("shutdown"));
    await running;
    assert.deepEqual(room.calls, ["typing true", "typing false"]);
    const row = store.invocation(event.event_id);
    assert.equal(row?.status, "candidate");
    assert.equal(row?.lastErrorCode, "shutdown");
  });

  test("typing failures never fail the invocation", async () => {
    room.typingResult = () => err(matrixError("matrix_forbidden", false));
    const event = mention(11);
    await worker(answer("Still here."))(lease(event), live);
    assert.equal(store.invocation(event.event_id)?.status, "sent");
  });

  test("a transient send failure keeps the exact payload ready_to_send and retries after a backoff", async () => {
    room.sendResult = () => err(matrixError("matrix_network", true));
    const event = mention(12);
    await worker(answer("Kept."))(lease(event), live);
    const row = store.invocation(event.event_id);
    assert.equal(row?.status, "ready_to_send");
    assert.equal(row?.responseJson, JSON.stringify({ msgtype: "m.text", body: "Kept.", [REPLY_MARKER_KEY]: row?.matrixTxnId }));
    assert.equal(row?.lastErrorCode, "matrix_network");
    const wait = (row?.availableAtMs ?? 0) - clock.now();
    assert.ok(wait >= SEND_RETRY_BASE_MS && wait <= SEND_RETRY_BASE_MS * 1.2, `backoff ${wait}`);
    assert.ok(log.lines.some((l) => l.event === "send_pending"));
  });

  test("a permanently rejected send waits for an operator, and is logged as an error", async () => {
    room.sendResult = () => err(matrixError("matrix_forbidden", false));
    const event = mention(13);
    await worker(answer("Rejected."))(lease(event), live);
    const row = store.invocation(event.event_id);
    assert.equal(row?.status, "ready_to_send");
    assert.equal(row?.availableAtMs, clock.now() + SEND_REJECTED_RETRY_MS);
    assert.ok(log.lines.some((l) => l.event === "send_rejected" && l.level === "error" && l.fields["code"] === "matrix_forbidden"));
  });

  test("a send item sends the stored payload verbatim without classifying or answering again", async () => {
    const event = mention(14);
    lease(event);
    store.commitReady(event.event_id, replyPayload("stored earlier"));
    const item = store.nextForRoom(ROOM, 60_000);
    assert.equal(item?.kind, "send");
    await worker(answer("never"))(item, live);
    assert.equal(respondCalls, 0);
    assert.deepEqual(room.calls, [`send ${ROOM}`]);
    assert.deepEqual(room.sent[0]?.content, JSON.parse(replyPayload("stored earlier")));
    assert.equal(store.invocation(event.event_id)?.status, "sent");
  });
});

describe("fallback text", () => {
  test("uses the overload text for limits and the generic text with every {error_code} replaced otherwise", () => {
    const settings = { genericError: "Oops [{error_code}] ({error_code})", overloadError: "Too much." };
    assert.equal(fallbackText(settings, "invocation_limit"), "Too much.");
    assert.equal(fallbackText(settings, "llm_request_too_large"), "Too much.");
    assert.equal(fallbackText(settings, "llm_unavailable"), "Oops [llm_unavailable] (llm_unavailable)");
  });
});

describe("typing lease", () => {
  test("refreshes while work continues and stops refreshing once cleared", async () => {
    const port = new FakeRoom();
    const lease = new TypingLease(ROOM, port, recordingLogger(), 10);
    await lease.start(new AbortController().signal);
    while (port.calls.length < 3) await delay(5);
    await lease.stop();
    const afterStop = port.calls.length;
    await delay(40);
    assert.equal(port.calls.length, afterStop, "no refresh after stop");
    assert.equal(port.calls.at(-1), "typing false");
    assert.ok(port.calls.slice(0, -1).every((c) => c === "typing true"));
  });

  test("work does not wait for the typing notification, and 'not typing' never overtakes 'typing'", async () => {
    const completed: string[] = [];
    let answerStart: (() => void) | null = null;
    const port: Pick<RoomWritePort, "setTyping"> = {
      setTyping: async (_room, typing) => {
        if (typing) await new Promise<void>((resolve) => (answerStart = resolve));
        completed.push(`typing ${typing}`);
        return ok(undefined);
      },
    };
    const lease = new TypingLease(ROOM, port, recordingLogger());
    void lease.start(new AbortController().signal);
    const stopped = lease.stop(); // the work finished before the server answered "typing"
    await delay(20);
    assert.deepEqual(completed, [], "the clear waits for the start");
    (answerStart as (() => void) | null)?.();
    await stopped;
    assert.deepEqual(completed, ["typing true", "typing false"]);
  });

  test("a lease that never started clears nothing", async () => {
    const port = new FakeRoom();
    await new TypingLease(ROOM, port, recordingLogger()).stop();
    assert.deepEqual(port.calls, []);
  });
});
