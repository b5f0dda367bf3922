// Issue 26 point 1 over a real ledger: a blocking room condition stops work
// before the LLM. In an encrypted room an invocation is ignored with
// `room_encrypted` and a reply made before the room turned encrypted is never
// sent; in a room Lisa cannot post in, nothing is leased while it is held,
// and once it clears the waiting work goes out once, oldest first, including
// a reply whose send was refused (no stale ready_to_send left behind).
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { ok, type Result } from "../../../src/errors.ts";
import { SEND_REJECTED_RETRY_MS } from "../../../src/invocation/backoff.ts";
import { RoomDispatcher } from "../../../src/invocation/dispatcher.ts";
import { OPEN_GATE, type RoomGate } from "../../../src/invocation/room-gate.ts";
import { createInvocationWorker } from "../../../src/invocation/worker.ts";
import { MatrixError } from "../../../src/matrix/errors.ts";
import type { RawEvent, RoomWritePort } from "../../../src/matrix/port.ts";
import type { StateStore, WorkItem } from "../../../src/state/types.ts";
import { baseline, openRun, replyPayload, tempDatabase, testClock, type TestClock } from "../../support/state-fixtures.ts";
import { recordingLogger } from "../ingest/fakes.ts";

const LISA = "@lisa:example.org";
const ROOM = "!room-a:example.org";
const OTHER = "!room-b:example.org";
const SETTINGS = {
  selfUserId: LISA, allowedRoomIds: new Set([ROOM, OTHER]), mentionAliases: ["Lisa"], invocationTimeoutMs: 60_000,
  genericError: "Oops. [Error: {error_code}]", overloadError: "Too much.", maxAttempts: 3,
};
const ENCRYPTED: RoomGate = { kind: "ignore", code: "room_encrypted" };
const FORBIDDEN: RoomGate = { kind: "hold", code: "room_send_forbidden" };

function mention(n: number, roomId = ROOM): RawEvent {
  return {
    event_id: `$ev${n}:example.org`, room_id: roomId, type: "m.room.message", sender: "@alice:example.org",
    origin_server_ts: 1_700_000_000_000 + n, content: { msgtype: "m.text", body: `Lisa, question ${n}?` },
  };
}

class FakeRoom implements RoomWritePort {
  readonly sent: string[] = [];
  sendResult: () => Result<string, MatrixError> = () => ok(`$reply${this.sent.length}:example.org`);
  tokenGeneration(): number {
    return 1;
  }
  async sendMessage(roomId: string, _txnId: string, content: Readonly<Record<string, unknown>>): Promise<Result<string, MatrixError>> {
    this.sent.push(`${roomId} ${String(content["body"])}`);
    return this.sendResult();
  }
  async setTyping(): Promise<Result<void, MatrixError>> {
    return ok(undefined);
  }
}

async function until(predicate: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(5);
  }
}

describe("LISA-ROOMSTATE-01: a blocking room condition stops work before the LLM", () => {
  let db: ReturnType<typeof tempDatabase>;
  let clock: TestClock;
  let store: StateStore;
  let room: FakeRoom;
  let log: ReturnType<typeof recordingLogger>;
  let gates: Map<string, RoomGate>;
  let asked: string[];
  let dispatcher: RoomDispatcher | null;

  beforeEach(() => {
    db = tempDatabase();
    clock = testClock();
    store = openRun(db.path, clock);
    baseline(store, [ROOM, OTHER]);
    room = new FakeRoom();
    log = recordingLogger();
    gates = new Map();
    asked = [];
    dispatcher = null;
  });
  afterEach(async () => {
    await dispatcher?.stop(0);
    store.close();
    db.cleanup();
  });

  const gate = (roomId: string): RoomGate => gates.get(roomId) ?? OPEN_GATE;
  function worker() {
    return createInvocationWorker({
      store, room, log, now: clock.now, settings: SETTINGS, gate,
      replyTarget: async () => "other",
      matchesAlias: (_room, text) => /\blisa\b/i.test(text),
      respond: async (event) => {
        asked.push(event.event_id);
        return ok({ markdown: `answer to ${event.event_id}`, sources: [] });
      },
      render: { reply: (draft) => ({ msgtype: "m.text", body: draft.markdown }), fallback: (text) => ({ msgtype: "m.text", body: text }) },
      sentLookup: async () => ok(null),
    });
  }
  function add(...events: RawEvent[]): void {
    store.commitSyncBatch({
      nextBatch: "s1", rooms: [],
      candidates: events.map((e) => ({
        eventId: e.event_id, roomId: e.room_id ?? ROOM, senderId: e.sender, receivedAtMs: e.origin_server_ts, rawEventJson: JSON.stringify(e),
      })),
    });
  }
  function lease(roomId = ROOM): WorkItem {
    const item = store.nextForRoom(roomId, 60_000);
    if (item === null) throw new Error("nothing to lease");
    return item;
  }
  const live = new AbortController().signal;

  test("in an encrypted room a mention is ignored with room_encrypted and nothing reaches the LLM or the room", async () => {
    gates.set(ROOM, ENCRYPTED);
    add(mention(1));
    await worker()(lease(), live);
    assert.deepEqual(asked, []);
    assert.deepEqual(room.sent, []);
    const row = store.invocation("$ev1:example.org");
    assert.equal(row?.status, "ignored");
    assert.equal(row?.lastErrorCode, "room_encrypted");
    assert.ok(log.lines.some((e) => e.event === "invocation_ignored" && e.fields["reason"] === "room_encrypted"));
  });

  test("a reply made before the room turned encrypted is discarded, never sent", async () => {
    add(mention(2));
    lease();
    store.commitReady("$ev2:example.org", replyPayload("made earlier"));
    gates.set(ROOM, ENCRYPTED);
    const stored = store.invocation("$ev2:example.org");
    assert.ok(stored !== null);
    await worker()({ kind: "send", invocation: stored }, live);
    assert.deepEqual(room.sent, []);
    assert.equal(store.invocation("$ev2:example.org")?.status, "ignored");
    assert.equal(store.status().countsByStatus.ready_to_send, 0, "no stale ready_to_send");
  });

  test("a room held for power leases nothing, sends nothing to the LLM, and its invocations show as pending", async () => {
    gates.set(ROOM, FORBIDDEN);
    add(mention(3), mention(4));
    const handled: string[] = [];
    dispatcher = new RoomDispatcher({
      store, log, now: clock.now, held: (roomId) => gate(roomId).kind === "hold",
      handler: async (item, signal, release) => {
        handled.push(item.invocation.eventId);
        await worker()(item, signal, release);
      },
      settings: { maxConcurrentRooms: 2, leaseMs: 60_000, pollIntervalMs: 60_000 },
    });
    dispatcher.start();
    dispatcher.notify([ROOM]);
    await delay(30);
    assert.deepEqual(handled, []);
    assert.deepEqual(asked, []);
    const status = store.status();
    assert.equal(status.countsByStatus.candidate, 2);
    assert.equal(status.countsByStatus.processing, 0, "no lease is held");

    // The condition clears: what waited is answered once, in order.
    gates.delete(ROOM);
    dispatcher.notify([ROOM]);
    await until(() => room.sent.length === 2, "both replies");
    assert.deepEqual(room.sent, [`${ROOM} answer to $ev3:example.org`, `${ROOM} answer to $ev4:example.org`]);
    assert.deepEqual(asked, ["$ev3:example.org", "$ev4:example.org"]);
  });

  test("a hold that begins after the lease hands the candidate back before the LLM", async () => {
    add(mention(5));
    const item = lease();
    gates.set(ROOM, FORBIDDEN);
    await worker()(item, live);
    assert.deepEqual(asked, []);
    assert.equal(store.invocation("$ev5:example.org")?.status, "candidate");
    assert.ok(log.lines.some((e) => e.event === "invocation_held" && e.fields["reason"] === "room_send_forbidden"));
  });

  test("a reply refused while Lisa could not send goes out first, at once, when the room lets her send again", async () => {
    add(mention(6));
    const refused = new MatrixError("matrix_forbidden", { errcode: "M_FORBIDDEN", httpStatus: 403, retryAfterMs: null }, false);
    room.sendResult = () => ({ ok: false, error: refused });
    await worker()(lease(), live);
    const row = store.invocation("$ev6:example.org");
    assert.equal(row?.status, "ready_to_send");
    assert.ok((row?.availableAtMs ?? 0) >= clock.now() + SEND_REJECTED_RETRY_MS, "a refused send waits an hour");
    // The room is held now; a newer mention waits behind the stored reply.
    gates.set(ROOM, FORBIDDEN);
    add(mention(7));
    assert.equal(store.resumeRoomSends(OTHER), 0, "another room's rows are untouched");
    gates.delete(ROOM);
    room.sendResult = () => ok(`$reply${room.sent.length}:example.org`);
    assert.equal(store.resumeRoomSends(ROOM), 1);
    const first = lease();
    assert.equal(first.kind, "send");
    assert.equal(first.invocation.eventId, "$ev6:example.org", "the older reply is the room's head");
    await worker()(first, live);
    await worker()(lease(), live);
    assert.deepEqual(room.sent.slice(-2), [`${ROOM} answer to $ev6:example.org`, `${ROOM} answer to $ev7:example.org`]);
    assert.equal(store.status().countsByStatus.ready_to_send, 0, "no stale ready_to_send");
  });

  test("a ready reply in a held room stays the room's head, due at once, instead of waiting an hour", async () => {
    add(mention(8));
    lease();
    store.commitReady("$ev8:example.org", replyPayload("made earlier"));
    gates.set(ROOM, FORBIDDEN);
    const stored = store.invocation("$ev8:example.org");
    assert.ok(stored !== null);
    await worker()({ kind: "send", invocation: stored }, live);
    assert.deepEqual(room.sent, []);
    const row = store.invocation("$ev8:example.org");
    assert.equal(row?.status, "ready_to_send");
    assert.ok((row?.availableAtMs ?? Infinity) <= clock.now());
    assert.ok(log.lines.some((e) => e.event === "send_held" && e.fields["code"] === "room_send_forbidden"));
  });

  test("status lists each room's active conditions beside its queue", () => {
    add(mention(9));
    store.raiseRoomCondition(ROOM, "room_send_forbidden");
    const [queue] = store.status().rooms;
    assert.deepEqual(queue?.conditions, ["room_send_forbidden"]);
  });
});
