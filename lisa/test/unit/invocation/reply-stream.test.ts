// Streaming replies in the invocation worker over a real ledger and a fake
// room port: one message per invocation (first send under the invocation's
// transaction id, edits under <txn>-e<seq>, the final edit under <txn>-final
// carrying exactly the stored reply), status lines only in that message,
// the fallback replacing partial text, a restart editing the same message
// on, a lost first send found by its marker, and rate-limited edits.
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { err, LisaError, ok, type Result } from "../../../src/errors.ts";
import { REPLY_MARKER_KEY } from "../../../src/invocation/sent-lookup.ts";
import { toolStatus } from "../../../src/invocation/reply-stream.ts";
import { createInvocationWorker, type ReplyDraft, type Responder, type WorkerDeps } from "../../../src/invocation/worker.ts";
import { MATRIX_CODES } from "../../../src/matrix/codes.ts";
import { MatrixError } from "../../../src/matrix/errors.ts";
import type { RawEvent, RoomWritePort } from "../../../src/matrix/port.ts";
import { matrixTransactionId } from "../../../src/state/txn-id.ts";
import type { StateStore, WorkItem } from "../../../src/state/types.ts";
import { baseline, openRun, tempDatabase, testClock } from "../../support/state-fixtures.ts";
import { walCommits } from "../../support/wal-commits.ts";
import { recordingLogger } from "../ingest/fakes.ts";

const ROOM = "!room-a:example.org";
const SETTINGS = {
  selfUserId: "@lisa:example.org", allowedRoomIds: new Set([ROOM]), mentionAliases: ["Lisa"], invocationTimeoutMs: 60_000,
  genericError: "Oops. [Error: {error_code}]", overloadError: "Too much.", maxAttempts: 3,
};
const POLICY = { intervalMs: 30, minNewCharacters: 5, firstCharacters: 4 };
const EVENT: RawEvent = { event_id: "$ev1:example.org", room_id: ROOM, type: "m.room.message", sender: "@alice:example.org", origin_server_ts: 1_700_000_000_001, content: { msgtype: "m.text", body: "Lisa, tell me?" } };
const TXN = matrixTransactionId(ROOM, EVENT.event_id);

/** The body a send shows: an edit's new content, or the message itself. */
const shownBody = (s: { content: Readonly<Record<string, unknown>> }) => String((s.content["m.new_content"] as Record<string, unknown> | undefined)?.["body"] ?? s.content["body"]);

class FakeRoom implements RoomWritePort {
  readonly sent: { txnId: string; content: Readonly<Record<string, unknown>> }[] = [];
  /** Answers by send; the default gives every non-edit send a new event id. */
  result: (txnId: string, content: Readonly<Record<string, unknown>>) => Result<string, MatrixError> = (txnId) => ok(`$${txnId}:example.org`);
  tokenGeneration(): number {
    return 1;
  }
  inFlight = 0;
  async sendMessage(_roomId: string, txnId: string, content: Readonly<Record<string, unknown>>): Promise<Result<string, MatrixError>> {
    this.sent.push({ txnId, content });
    this.inFlight += 1;
    try {
      await delay(1);
      return this.result(txnId, content);
    } finally {
      this.inFlight -= 1;
    }
  }
  /** Resolves once no send is in flight (within 5 s), so a loaded machine's slow send does not swallow the next pieces. */
  async idle(): Promise<void> {
    const deadline = Date.now() + 5_000;
    while (this.inFlight > 0 && Date.now() < deadline) await delay(2);
  }
  async setTyping(): Promise<Result<void, MatrixError>> {
    return ok(undefined);
  }
  /** Sends that are new messages (not edits). */
  messages() {
    return this.sent.filter((s) => (s.content["m.relates_to"] as { rel_type?: string } | undefined)?.rel_type !== "m.replace");
  }
}

/**
 * A responder that streams `pieces` (pausing between them) and answers with their whole text, or fails.
 * Before the pieces at `tools` it reports a tool and waits `toolPause` (80 ms unless given).
 */
function streaming(pieces: readonly string[], outcome: "answer" | "fail" = "answer", tools: readonly number[] = [], toolPause: () => Promise<unknown> = () => delay(80), between: () => Promise<unknown> = () => delay(15)): Responder {
  return async (_event, _signal, progress) => {
    let text = "";
    for (const [i, piece] of pieces.entries()) {
      if (tools.includes(i)) {
        progress?.({ kind: "tool", name: "fetch_web_page", url: "https://www.example.org/page" });
        await toolPause();
      }
      text += piece;
      progress?.({ kind: "text", markdown: text });
      await between();
    }
    await delay(40);
    return outcome === "answer" ? ok<ReplyDraft>({ markdown: text, sources: [] }) : err(new LisaError("llm_unavailable", "down"));
  };
}

describe("LISA-STREAM-08, LISA-STREAM-09: streaming replies in the worker", () => {
  let db: ReturnType<typeof tempDatabase>;
  let store: StateStore;
  let room: FakeRoom;
  let lookups: number;
  let found: string | null;

  beforeEach(() => {
    db = tempDatabase();
    store = openRun(db.path, testClock());
    baseline(store, [ROOM]);
    room = new FakeRoom();
    lookups = 0;
    found = null;
  });
  afterEach(() => {
    store.close();
    db.cleanup();
  });

  function worker(respond: Responder, overrides: Partial<WorkerDeps> = {}) {
    return createInvocationWorker({
      store, room, log: recordingLogger(), settings: SETTINGS, streaming: POLICY,
      replyTarget: async () => "other",
      matchesAlias: (_room, text) => /\blisa\b/i.test(text),
      respond,
      render: {
        reply: (draft) => ({ msgtype: "m.text", body: `final: ${draft.markdown}`, "m.relates_to": { "m.in_reply_to": { event_id: EVENT.event_id } } }),
        fallback: (text) => ({ msgtype: "m.text", body: `fallback: ${text}`, "m.relates_to": { "m.in_reply_to": { event_id: EVENT.event_id } } }),
        partial: (view) => ({ msgtype: "m.text", body: `partial: ${view.markdown}|${view.status ?? ""}`, "m.relates_to": { "m.in_reply_to": { event_id: EVENT.event_id } } }),
      },
      sentLookup: async () => {
        lookups += 1;
        return ok(found);
      },
      ...overrides,
    });
  }

  function lease(): WorkItem {
    store.commitSyncBatch({
      nextBatch: "s1", rooms: [],
      candidates: [{ eventId: EVENT.event_id, roomId: ROOM, senderId: EVENT.sender, receivedAtMs: EVENT.origin_server_ts, rawEventJson: JSON.stringify(EVENT) }],
    });
    const item = store.nextForRoom(ROOM, 60_000);
    if (item === null) throw new Error("nothing to lease");
    return item;
  }

  const live = new AbortController().signal;
  /**
   * A tool that runs until the room shows `text` (once the message exists), within 5 s, so the status
   * line's edit does not race a loaded machine; a tool reported before the first words pauses 80 ms.
   */
  const toolUntilShown = (text: string) => async () => {
    await delay(80);
    const deadline = Date.now() + 5_000;
    while (room.sent.length > 0 && !room.sent.some((s) => shownBody(s).includes(text)) && Date.now() < deadline) await delay(5);
  };
  const newContent = (i: number) => room.sent[i]?.content["m.new_content"] as Record<string, unknown> | undefined;

  test("one message: the first words, paced edits, and a final edit carrying exactly the stored reply", async () => {
    // Each piece comes 15 ms after the last and after any send in flight, so the pacing, not the machine's load, decides the edits.
    const paced = async () => { await delay(15); await room.idle(); };
    await worker(streaming(["Hello ", "there, ", "this is ", "a longer ", "answer ", "that grows ", "and grows. "], "answer", [], undefined, paced))(lease(), live);
    const first = room.sent[0];
    assert.equal(first?.txnId, TXN);
    assert.match(String(first?.content["body"]), /^partial: Hello/);
    assert.equal(first?.content[REPLY_MARKER_KEY], TXN);
    assert.equal(room.messages().length, 1, "one message, everything else edits");
    const edits = room.sent.slice(1);
    assert.ok(edits.length >= 2, `edits: ${edits.length}`);
    assert.deepEqual(edits.slice(0, -1).map((e) => e.txnId), edits.slice(0, -1).map((_, i) => `${TXN}-e${i + 1}`));
    const last = edits[edits.length - 1];
    assert.equal(last?.txnId, `${TXN}-final`);
    for (const edit of edits) assert.deepEqual(edit.content["m.relates_to"], { rel_type: "m.replace", event_id: `$${TXN}:example.org` });
    const stored = { msgtype: "m.text", body: "final: Hello there, this is a longer answer that grows and grows. ", [REPLY_MARKER_KEY]: TXN };
    assert.deepEqual(newContent(room.sent.length - 1), stored);
    const row = store.invocation(EVENT.event_id);
    assert.equal(row?.status, "sent");
    assert.equal(row?.sentEventId, `$${TXN}:example.org`);
    assert.ok(store.isBotEvent(`$${TXN}:example.org`, ROOM));
  });

  // LISA-STREAM-20: the commits of one reply after its lease, counted in the ledger's write-ahead log
  // (each one fsync'd): begin (before the first send), the message id with edit numbers 1-16 (before
  // any edit), ready (before the final edit), sent; without streaming only ready and sent.
  test("LISA-STREAM-20: a streamed reply commits the ledger 4 times after its lease, a reply without streaming 2", async () => {
    const paced = async () => { await delay(15); await room.idle(); };
    const item = lease();
    const before = walCommits(db.path);
    await worker(streaming(["Hello ", "there, ", "this is ", "a longer ", "answer ", "that grows ", "and grows. "], "answer", [], undefined, paced))(item, live);
    const after = walCommits(db.path);
    assert.equal(after.log, before.log, "no checkpoint in between");
    const edits = room.sent.filter((s) => /-e\d+$/.test(s.txnId)).length;
    assert.ok(edits >= 2 && edits <= 16, `edits: ${edits}`);
    assert.equal(store.invocation(EVENT.event_id)?.status, "sent");
    assert.equal(after.commits - before.commits, 4, "begin; message id + edit numbers; ready; sent");
    assert.deepEqual(store.replyStream(EVENT.event_id), { sentEventId: `$${TXN}:example.org`, lastSeq: 16 });

    const plain = { ...EVENT, event_id: "$ev2:example.org", origin_server_ts: EVENT.origin_server_ts + 1 };
    store.commitSyncBatch({
      nextBatch: "s2", rooms: [],
      candidates: [{ eventId: plain.event_id, roomId: ROOM, senderId: plain.sender, receivedAtMs: plain.origin_server_ts, rawEventJson: JSON.stringify(plain) }],
    });
    const next = store.nextForRoom(ROOM, 60_000);
    assert.ok(next !== null);
    const start = walCommits(db.path);
    await worker(async () => ok<ReplyDraft>({ markdown: "At once.", sources: [] }), { streaming: undefined })(next, live);
    const end = walCommits(db.path);
    assert.equal(end.log, start.log);
    assert.equal(store.invocation(plain.event_id)?.status, "sent");
    assert.equal(end.commits - start.commits, 2, "ready; sent");
  });

  test("LISA-STREAM-20: past the first 16 edits, one more commit reserves each further 16 edit numbers", async () => {
    const paced = async () => { await delay(40); await room.idle(); };
    const item = lease();
    const before = walCommits(db.path);
    await worker(streaming(Array.from({ length: 40 }, (_, i) => `piece${i} `), "answer", [], undefined, paced))(item, live);
    const after = walCommits(db.path);
    assert.equal(after.log, before.log, "no checkpoint in between");
    const edits = room.sent.filter((s) => /-e\d+$/.test(s.txnId));
    assert.ok(edits.length > 16, `edits: ${edits.length}`);
    assert.deepEqual(edits.map((e) => e.txnId), edits.map((_, i) => `${TXN}-e${i + 1}`));
    assert.equal(after.commits - before.commits, 4 + Math.ceil(edits.length / 16) - 1);
  });

  test("a status line appears in the same message only once it exists; the fallback replaces the partial text", async () => {
    await worker(streaming(["Let me ", "check. ", "Reading ", "done now ", "and more. "], "fail", [0, 2], toolUntilShown("reading example.org…")))(lease(), live);
    assert.equal(room.messages().length, 1);
    assert.match(String(room.sent[0]?.content["body"]), /^partial: Let me \|$/, "no status before the first words");
    const statuses = room.sent.filter((s) => String((s.content["m.new_content"] as Record<string, unknown> | undefined)?.["body"]).includes("reading example.org…"));
    assert.ok(statuses.length >= 1, JSON.stringify(room.sent.map((s) => s.content["body"])));
    assert.equal(newContent(room.sent.length - 1)?.["body"], "fallback: Oops. [Error: llm_unavailable]");
    assert.equal(store.invocation(EVENT.event_id)?.status, "sent");
  });

  test("LISA-STREAM-16: the status lines are the persona's configured texts ({host} filled in)", async () => {
    const statusTexts = { searching: "suche im Netz…", reading: "lese {host}…", readingPage: "lese eine Seite…", working: "arbeite daran…" };
    await worker(streaming(["Lass mich ", "nachsehen. ", "Gelesen ", "und fertig ", "mit mehr. "], "answer", [0, 2], toolUntilShown("lese example.org…")), { statusTexts })(lease(), live);
    const bodies = room.sent.map(shownBody);
    assert.ok(bodies.some((b) => b.includes("lese example.org…")), JSON.stringify(bodies));
    assert.ok(bodies.every((b) => !b.includes("reading")), JSON.stringify(bodies));
    assert.equal(toolStatus("web_search", null, statusTexts), "suche im Netz…");
    assert.equal(toolStatus("fetch_web_page", "not a url", statusTexts), "lese eine Seite…");
    assert.equal(toolStatus("something_else", null, statusTexts), "arbeite daran…");
    assert.equal(toolStatus("web_search", null), "searching the web…", "the defaults without configuration");
  });

  test("a restart edits the same message on (no second message, edit numbers continue), then finishes it", async () => {
    const shutdown = new AbortController();
    const stop: Responder = async (e, s, progress) => {
      const partial = streaming(["Hello ", "there, ", "partial text "]);
      await partial(e, s, progress);
      shutdown.abort();
      return err(new LisaError("invocation_cancelled", "stop"));
    };
    await worker(stop)(lease(), shutdown.signal);
    assert.equal(store.invocation(EVENT.event_id)?.status, "candidate");
    const before = room.sent.length;
    const lastSeq = store.replyStream(EVENT.event_id)?.lastSeq ?? 0;
    store.requeueAllOnStartup();
    const again = store.nextForRoom(ROOM, 60_000);
    assert.ok(again !== null);
    await worker(streaming(["Fresh ", "answer ", "after restart. "]))(again, live);
    assert.equal(room.messages().length, 1);
    const after = room.sent.slice(before);
    assert.ok(after.length >= 2 && after.every((s) => (s.content["m.relates_to"] as { event_id: string }).event_id === `$${TXN}:example.org`));
    assert.equal(after[0]?.txnId, `${TXN}-e${lastSeq + 1}`);
    assert.equal(after[after.length - 1]?.txnId, `${TXN}-final`);
    assert.equal(newContent(room.sent.length - 1)?.["body"], "final: Fresh answer after restart. ");
    assert.equal(lookups, 0, "the stored event id needs no lookup");
  });

  test("a first send whose outcome was lost is found by its marker and edited, never sent twice", async () => {
    const item = lease();
    store.beginReplyStream(EVENT.event_id);
    found = "$earlier:example.org";
    await worker(streaming(["Hello ", "there, ", "all good. "]))(item, live);
    assert.equal(lookups, 1);
    assert.equal(room.messages().length, 0);
    assert.ok(room.sent.every((s) => (s.content["m.relates_to"] as { event_id: string }).event_id === "$earlier:example.org"));
    assert.equal(store.invocation(EVENT.event_id)?.sentEventId, "$earlier:example.org");
  });

  test("a failed first send ends partials; the final send finds nothing and sends the reply, then edits it to itself", async () => {
    let first = true;
    room.result = (txnId) => {
      if (first) {
        first = false;
        return err(new MatrixError("M_UNKNOWN", { errcode: "M_UNKNOWN", httpStatus: 500, retryAfterMs: null }, true));
      }
      return ok(`$${txnId}:example.org`);
    };
    await worker(streaming(["Hello ", "there, ", "more text here. "]))(lease(), live);
    assert.deepEqual(room.sent.map((s) => s.txnId), [TXN, TXN, `${TXN}-final`]);
    assert.equal(store.invocation(EVENT.event_id)?.status, "sent");
  });

  test("rate-limited edits slow down; a rate-limited final edit is retried until it lands", async () => {
    room.result = (txnId) => (/-e\d+$/.test(txnId) || txnId.endsWith("-final")
      ? err(new MatrixError(MATRIX_CODES.rateLimited, { errcode: "M_LIMIT_EXCEEDED", httpStatus: 429, retryAfterMs: 200 }, true))
      : ok(`$${txnId}:example.org`));
    const log = recordingLogger();
    await worker(streaming(Array.from({ length: 12 }, (_, i) => `word${i} more `)), { log })(lease(), live);
    const edits = room.sent.filter((s) => /-e\d+$/.test(s.txnId));
    assert.ok(edits.length <= 3, `edits under the limit: ${edits.length}`);
    assert.ok(log.lines.some((l) => l.event === "stream_send_failed" && Number(l.fields["interval_ms"]) >= 200));
    assert.equal(store.invocation(EVENT.event_id)?.status, "ready_to_send");
    room.result = (txnId) => ok(`$${txnId}:example.org`);
    const row = store.invocation(EVENT.event_id);
    assert.ok(row !== null);
    await worker(streaming([]))({ kind: "send", invocation: row }, live);
    assert.equal(store.invocation(EVENT.event_id)?.status, "sent");
    assert.equal(room.sent[room.sent.length - 1]?.txnId, `${TXN}-final`);
    assert.equal(room.messages().length, 1);
  });
});
