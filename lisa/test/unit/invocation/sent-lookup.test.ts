// Exactly-once independent of the server's transaction-id scope (LISA-COMPAT-01,
// item 3): each reply carries its transaction id as a marker, and
// a stored reply resent under another access token than an earlier attempt is
// first looked for in the room. Dendrite scopes txn ids to the access token,
// so a resend after a new login would otherwise post the reply twice.
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { err, ok, type Result } from "../../../src/errors.ts";
import { createSentReplyLookup, REPLY_MARKER_KEY, type SentReplyLookup } from "../../../src/invocation/sent-lookup.ts";
import { createInvocationWorker } from "../../../src/invocation/worker.ts";
import { sessionRenewedError } from "../../../src/matrix/codes.ts";
import { MatrixError } from "../../../src/matrix/errors.ts";
import type { EventPage, ForwardHistoryPort, RawEvent } from "../../../src/matrix/port.ts";
import { withRetry, resolveRetryPolicy } from "../../../src/matrix/retry.ts";
import type { StateStore, WorkItem } from "../../../src/state/types.ts";
import { baseline, openRun, replyPayload, tempDatabase, testClock } from "../../support/state-fixtures.ts";
import { recordingLogger } from "../ingest/fakes.ts";
import { authReply, authScript, makeClient, ROOM as CLIENT_ROOM, startServer, unknownToken } from "../matrix/harness.ts";

const LISA = "@lisa:example.org";
const ROOM = "!room-a:example.org";
const SETTINGS = {
  selfUserId: LISA, allowedRoomIds: new Set([ROOM]), mentionAliases: ["Lisa"], invocationTimeoutMs: 60_000,
  genericError: "Oops. [Error: {error_code}]", overloadError: "Too much.", maxAttempts: 3,
};
const networkError = (): MatrixError => new MatrixError("matrix_network", { errcode: null, httpStatus: null, retryAfterMs: null }, true);

function mention(n: number): RawEvent {
  return { event_id: `$ev${n}:example.org`, room_id: ROOM, type: "m.room.message", sender: "@alice:example.org", origin_server_ts: 1_700_000_000_000 + n, content: { msgtype: "m.text", body: `Lisa, question ${n}?` } };
}

describe("a stored reply is looked for in the room before a resend under another access token", () => {
  let db: ReturnType<typeof tempDatabase>;
  let store: StateStore;
  let generation: number;
  let sends: string[];
  let sendResult: () => Result<string, MatrixError>;
  let lookups: string[];
  let lookupResult: () => Result<string | null, MatrixError>;
  let log: ReturnType<typeof recordingLogger>;
  const live = new AbortController().signal;

  beforeEach(() => {
    db = tempDatabase();
    const clock = testClock();
    store = openRun(db.path, clock);
    baseline(store, [ROOM]);
    generation = 1;
    sends = [];
    sendResult = () => ok(`$reply${sends.length}:example.org`);
    lookups = [];
    lookupResult = () => ok(null);
    log = recordingLogger();
  });
  afterEach(() => {
    store.close();
    db.cleanup();
  });

  const worker = () => createInvocationWorker({
    store, log, settings: SETTINGS,
    room: {
      sendMessage: async (_room, txnId) => {
        sends.push(txnId);
        return sendResult();
      },
      setTyping: async () => ok(undefined),
      tokenGeneration: () => generation,
    },
    sentLookup: async (_room, eventId) => {
      lookups.push(eventId);
      return lookupResult();
    },
    replyTarget: async () => "other",
    matchesAlias: (_room, text) => /\blisa\b/i.test(text),
    respond: async () => ok({ markdown: "Indeed.", sources: [] }),
    render: { reply: (draft) => ({ msgtype: "m.text", body: draft.markdown }), fallback: (text) => ({ msgtype: "m.text", body: text }) },
  });

  function lease(event: RawEvent): WorkItem {
    store.commitSyncBatch({
      nextBatch: "s1", rooms: [],
      candidates: [{ eventId: event.event_id, roomId: ROOM, senderId: event.sender, receivedAtMs: event.origin_server_ts, rawEventJson: JSON.stringify(event) }],
    });
    const item = store.nextForRoom(ROOM, 60_000);
    assert.ok(item !== null);
    return item;
  }

  /** A ready reply left by an earlier process (its attempts, if any, used a token that is gone). */
  function storedReply(event: RawEvent): WorkItem {
    lease(event);
    store.commitReady(event.event_id, replyPayload("stored earlier"));
    const item = store.nextForRoom(ROOM, 60_000);
    assert.equal(item?.kind, "send");
    return item!;
  }

  test("every reply's content carries its invocation's transaction id as the marker", async () => {
    const event = mention(1);
    await worker()(lease(event), live);
    const row = store.invocation(event.event_id);
    assert.equal(row?.status, "sent");
    assert.deepEqual(lookups, [], "a fresh reply is sent at once");
    assert.equal(sends.length, 1);
    assert.equal(sends[0], row?.matrixTxnId);
  });

  test("a stored reply found in the room is marked sent with the found event and not sent again", async () => {
    const event = mention(2);
    lookupResult = () => ok("$found:example.org");
    await worker()(storedReply(event), live);
    assert.deepEqual(lookups, [event.event_id]);
    assert.deepEqual(sends, [], "nothing sent");
    assert.equal(store.invocation(event.event_id)?.status, "sent");
    assert.ok(store.isBotEvent("$found:example.org", ROOM));
    assert.ok(log.lines.some((l) => l.event === "invocation_sent" && l.fields["found_in_room"] === true));
  });

  test("a stored reply not found in the room is sent once", async () => {
    const event = mention(3);
    await worker()(storedReply(event), live);
    assert.deepEqual(lookups, [event.event_id]);
    assert.equal(sends.length, 1);
    assert.equal(store.invocation(event.event_id)?.status, "sent");
  });

  test("a retry under the same token sends without a lookup; after the token changed it looks first", async () => {
    const event = mention(4);
    const run = worker();
    sendResult = () => err(networkError());
    await run(lease(event), live);
    assert.equal(store.invocation(event.event_id)?.status, "ready_to_send");
    const again = (): WorkItem => {
      store.recordSendFailure(event.event_id, "matrix_network", 0);
      const item = store.nextForRoom(ROOM, 60_000);
      assert.equal(item?.kind, "send");
      return item!;
    };
    await run(again(), live);
    assert.deepEqual(lookups, [], "same token: the txn id deduplicates on every server");
    generation = 2;
    sendResult = () => ok("$reply:example.org");
    await run(again(), live);
    assert.deepEqual(lookups, [event.event_id], "another token: look in the room first");
    assert.equal(sends.length, 3);
    assert.equal(store.invocation(event.event_id)?.status, "sent");
  });

  test("a send whose token was renewed instead of repeated is looked for in the room and sent again at once", async () => {
    const event = mention(6);
    sendResult = () => {
      if (sends.length > 1) return ok("$second:example.org");
      generation = 2;
      return err(sessionRenewedError());
    };
    await worker()(lease(event), live);
    assert.deepEqual(lookups, [event.event_id], "the new token may not repeat what the old one sent");
    assert.equal(sends.length, 2);
    assert.equal(store.invocation(event.event_id)?.sentEventId, "$second:example.org");
  });

  test("a failed lookup keeps the reply ready_to_send and sends nothing", async () => {
    const event = mention(5);
    lookupResult = () => err(networkError());
    await worker()(storedReply(event), live);
    assert.deepEqual(sends, []);
    const row = store.invocation(event.event_id);
    assert.equal(row?.status, "ready_to_send");
    assert.equal(row?.lastErrorCode, "matrix_network");
  });
});

/** A room timeline after the invoking event, served by /context (first part) and forward /messages pages. */
function history(after: readonly RawEvent[], contextSize: number): ForwardHistoryPort & { calls: string[] } {
  const calls: string[] = [];
  const pageOf = (start: number, size: number, sender: string | null): EventPage => {
    const events = after.slice(start, start + size).filter((e) => sender === null || e.sender === sender);
    return { events, next: start + size < after.length ? `t${start + size}` : null };
  };
  return {
    calls,
    eventsAfter: async (_room, eventId, limit) => {
      calls.push(`context ${eventId} ${limit}`);
      return ok(pageOf(0, contextSize, null));
    },
    messagesForward: async (_room, from, limit, sender) => {
      calls.push(`messages ${from} ${limit} ${sender ?? "anyone"}`);
      return ok(pageOf(Number(from.slice(1)), limit, sender));
    },
  };
}

function message(n: number, sender: string, content: Record<string, unknown> = {}): RawEvent {
  return { event_id: `$m${n}`, room_id: ROOM, type: "m.room.message", sender, origin_server_ts: n, content: { msgtype: "m.text", body: `m${n}`, ...content } };
}

describe("the bounded room lookup for Lisa's marked reply", () => {
  const find = (port: ForwardHistoryPort, limits = { contextEvents: 3, maxPages: 2, pageSize: 2 }): SentReplyLookup => createSentReplyLookup(port, LISA, limits);
  const live = new AbortController().signal;

  test("finds the reply right after the invoking event through /context", async () => {
    const port = history([message(1, "@bob:example.org"), message(2, LISA, { [REPLY_MARKER_KEY]: "lisa_x" })], 3);
    assert.deepEqual(await find(port)(ROOM, "$inv", "lisa_x", live), ok("$m2"));
    assert.deepEqual(port.calls, ["context $inv 3"]);
  });

  test("pages forward over Lisa's own events, and ignores a marker copied by someone else", async () => {
    const after = [
      message(1, "@bob:example.org"), message(2, "@bob:example.org", { [REPLY_MARKER_KEY]: "lisa_x" }), message(3, "@bob:example.org"),
      message(4, LISA, { [REPLY_MARKER_KEY]: "lisa_other" }), message(5, LISA, { [REPLY_MARKER_KEY]: "lisa_x" }),
    ];
    const port = history(after, 3);
    assert.deepEqual(await find(port)(ROOM, "$inv", "lisa_x", live), ok("$m5"));
    assert.deepEqual(port.calls, ["context $inv 3", `messages t3 2 ${LISA}`]);
  });

  test("stops after its page bound and reports not found", async () => {
    const after = Array.from({ length: 20 }, (_, i) => message(i, "@bob:example.org"));
    after.push(message(99, LISA, { [REPLY_MARKER_KEY]: "lisa_x" }));
    const port = history(after, 3);
    assert.deepEqual(await find(port)(ROOM, "$inv", "lisa_x", live), ok(null));
    assert.equal(port.calls.length, 3, "one /context and two pages");
  });

  test("a failing read is returned as the error, not as not found", async () => {
    const port: ForwardHistoryPort = { eventsAfter: async () => err(networkError()), messagesForward: async () => ok({ events: [], next: null }) };
    const result = await find(port)(ROOM, "$inv", "lisa_x", live);
    assert.equal(result.ok, false);
  });
});

describe("the client's send retries stop once the access token changed", () => {
  test("withRetry gives up when mayRetry says no, returning the last failure", async () => {
    let attempts = 0;
    const policy = resolveRetryPolicy({ maxRetries: 5, baseDelayMs: 1, maxDelayMs: 1 });
    const result = await withRetry(policy, new AbortController().signal, async () => {
      attempts += 1;
      return err(networkError());
    }, undefined, () => attempts < 2);
    assert.equal(attempts, 2);
    assert.equal(result.ok ? "ok" : result.error.code, "matrix_network");
  });
});

describe("the client never repeats a send under a renewed token, and reads forwards for the lookup", () => {
  const ROOM = CLIENT_ROOM;
  test("a send refused with 401 renews the token but is not repeated; it answers matrix_session_renewed", async (t) => {
    const auth = authScript(false);
    let sends = 0;
    const server = await startServer((request) => {
      if (request.pathname.includes("/send/")) {
        sends += 1;
        return sends === 1 ? unknownToken() : { json: { event_id: "$sent" } };
      }
      return authReply(auth, request) ?? { json: {} };
    });
    const { client } = makeClient(server.url);
    t.after(async () => {
      await client.close();
      await server.close();
    });
    assert.ok((await client.login(new AbortController().signal)).ok);
    const before = client.tokenGeneration();
    const result = await client.sendMessage(ROOM, "lisa_txn", { body: "x" }, new AbortController().signal);
    assert.equal(result.ok ? "ok" : result.error.code, "matrix_session_renewed");
    assert.equal(result.ok ? false : result.error.retryable, true);
    assert.equal(sends, 1, "not repeated under the new token");
    assert.equal(client.tokenGeneration(), before + 1, "the token was renewed");
    assert.deepEqual(await client.sendMessage(ROOM, "lisa_txn", { body: "x" }, new AbortController().signal), ok("$sent"));
  });

  test("the lookup reads /context after the event, then forward /messages of Lisa's events only", async (t) => {
    const auth = authScript(false);
    const server = await startServer((request) => {
      if (request.pathname.includes("/context/")) return { json: { event: {}, events_after: [{ event_id: "$a", type: "m.room.message", sender: "@bob:localhost", origin_server_ts: 1, content: {} }], end: "e1" } };
      if (request.pathname.endsWith("/messages")) return { json: { chunk: [], end: "e2" } };
      return authReply(auth, request) ?? { json: {} };
    });
    const { client } = makeClient(server.url);
    t.after(async () => {
      await client.close();
      await server.close();
    });
    const found = await createSentReplyLookup(client, "@lisa:localhost")(ROOM, "$inv", "lisa_txn", new AbortController().signal);
    assert.deepEqual(found, ok(null));
    assert.equal(server.hits("/context/$inv").length + server.hits(`/context/${encodeURIComponent("$inv")}`).length, 1);
    const forward = server.hits("/messages")[0];
    assert.equal(forward?.query.get("dir"), "f");
    assert.equal(forward?.query.get("from"), "e1");
    assert.deepEqual(JSON.parse(forward?.query.get("filter") ?? "null"), { senders: ["@lisa:localhost"] });
  });
});
