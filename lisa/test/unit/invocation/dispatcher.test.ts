// RoomDispatcher concurrency over a real
// SQLite ledger: strict per-room serialisation, a global limit on active
// rooms, no permit for idle rooms, nothing lost from a backlog, graceful stop,
// crash isolation and oldest-first resumption.
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { RoomDispatcher, type DispatcherSettings } from "../../../src/invocation/dispatcher.ts";
import { Semaphore } from "../../../src/invocation/semaphore.ts";
import { roomHash } from "../../../src/log/hash.ts";
import type { StateStore, WorkItem } from "../../../src/state/types.ts";
import { recordingLogger } from "../ingest/fakes.ts";
import { baseline, candidate, ingest, openRun, replyPayload, tempDatabase, testClock, type TestClock } from "../../support/state-fixtures.ts";

const A = "!room-a:example.org";
const B = "!room-b:example.org";
const C = "!room-c:example.org";
const D = "!room-d:example.org";
const ROOMS = [A, B, C, D];
const eventOf = (n: number): string => `$event${n}:example.org`;

/** Resolves once `predicate` holds (polling); rejects after a generous deadline. */
async function until(predicate: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(5);
  }
}

/** A handler that records calls and overlap, waits while `hold` says so, then finishes the row. */
class RecordingHandler {
  readonly calls: WorkItem[] = [];
  readonly signals: AbortSignal[] = [];
  active = 0;
  maxActive = 0;
  maxPerRoom = 0;
  hold: (item: WorkItem) => boolean = () => false;
  /** Items whose permit is handed back before holding (a durable reply being sent). */
  releaseEarly: (item: WorkItem) => boolean = () => false;
  crash: (item: WorkItem, call: number) => boolean = () => false;
  readonly #perRoom = new Map<string, number>();
  readonly #store: StateStore;

  constructor(store: StateStore) {
    this.#store = store;
  }

  readonly handle = async (item: WorkItem, signal: AbortSignal, releasePermit: () => void): Promise<void> => {
    const room = item.invocation.roomId;
    this.calls.push(item);
    this.signals.push(signal);
    this.#perRoom.set(room, (this.#perRoom.get(room) ?? 0) + 1);
    this.active += 1;
    this.maxActive = Math.max(this.maxActive, this.active);
    this.maxPerRoom = Math.max(this.maxPerRoom, this.#perRoom.get(room) ?? 0);
    try {
      await delay(1);
      if (this.crash(item, this.calls.length)) throw new Error("handler bug");
      if (this.releaseEarly(item)) {
        this.active -= 1;
        releasePermit();
      }
      while (this.hold(item) && !signal.aborted) await delay(2);
      if (signal.aborted) {
        this.#store.releaseLease(item.invocation.eventId, "shutdown");
        return;
      }
      if (item.kind === "send") this.#store.markSent(item.invocation.eventId, `$sent-${item.invocation.eventId.slice(1)}`);
      else this.#store.markIgnored(item.invocation.eventId, "no_mention");
    } finally {
      if (!this.releaseEarly(item)) this.active -= 1;
      this.#perRoom.set(room, (this.#perRoom.get(room) ?? 1) - 1);
    }
  };

  handled(room?: string): string[] {
    return this.calls.filter((c) => room === undefined || c.invocation.roomId === room).map((c) => c.invocation.eventId);
  }
}

describe("room dispatcher", () => {
  let db: ReturnType<typeof tempDatabase>;
  let clock: TestClock;
  let store: StateStore;
  let handler: RecordingHandler;
  let log: ReturnType<typeof recordingLogger>;
  let dispatcher: RoomDispatcher | null;

  beforeEach(() => {
    db = tempDatabase();
    clock = testClock();
    store = openRun(db.path, clock);
    baseline(store, ROOMS);
    handler = new RecordingHandler(store);
    log = recordingLogger();
    dispatcher = null;
  });
  afterEach(async () => {
    await dispatcher?.stop(0);
    store.close();
    db.cleanup();
  });

  function makeDispatcher(settings: Partial<DispatcherSettings> = {}): RoomDispatcher {
    dispatcher = new RoomDispatcher({
      store, handler: handler.handle, log, now: clock.now,
      settings: { maxConcurrentRooms: 2, leaseMs: 60_000, pollIntervalMs: 60_000, ...settings },
    });
    return dispatcher;
  }

  /** Inserts candidates n (in `room`) in one batch. */
  function add(room: string, ...ns: number[]): void {
    ingest(store, ns.map((n) => candidate(n, { roomId: room })));
  }

  test("a room never overlaps itself, even while its first invocation is suspended", async () => {
    const d = makeDispatcher();
    add(A, 1, 2, 3);
    handler.hold = (item) => item.invocation.eventId === eventOf(1);
    d.notify([A]);
    await until(() => handler.calls.length === 1, "the first call");
    d.notify([A]);
    add(A, 4);
    d.notify([A, A]);
    await delay(30); // give a broken dispatcher the chance to start a second worker
    assert.equal(handler.calls.length, 1);
    assert.equal(d.activeRooms, 1, "one loop per room");
    handler.hold = () => false;
    await until(() => handler.calls.length === 4 && d.activeRooms === 0, "the room drained");
    assert.deepEqual(handler.handled(A), [1, 2, 3, 4].map(eventOf), "strictly FIFO");
    assert.equal(handler.maxPerRoom, 1);
  });

  test("rooms overlap up to max_concurrent_rooms and never beyond", async () => {
    const d = makeDispatcher({ maxConcurrentRooms: 2 });
    ROOMS.forEach((room, i) => add(room, i + 1));
    handler.hold = () => true;
    d.notify(ROOMS);
    await until(() => handler.active === 2, "two rooms at work");
    await delay(30);
    assert.equal(handler.active, 2);
    assert.equal(d.activeRooms, 4, "the other rooms wait for a permit");
    handler.hold = () => false;
    await until(() => handler.calls.length === 4 && d.activeRooms === 0, "all rooms served");
    assert.equal(handler.maxActive, 2);
  });

  test("an idle room holds no permit: with one permit, rooms are served one after another", async () => {
    const d = makeDispatcher({ maxConcurrentRooms: 1 });
    add(A, 1);
    d.notify([A]);
    await until(() => handler.calls.length === 1 && d.activeRooms === 0, "room A idle");
    add(B, 2);
    d.notify([B]);
    await until(() => handler.calls.length === 2 && d.activeRooms === 0, "room B served");
    // A room whose head waits in backoff is idle too.
    add(C, 3);
    assert.equal(store.nextForRoom(C, 60_000)?.kind, "process");
    store.releaseLease(eventOf(3), "reply_target_unavailable", clock.now() + 10_000);
    add(D, 4);
    d.notify([C, D]);
    await until(() => handler.calls.length === 3 && d.activeRooms === 0, "room D served");
    assert.deepEqual(handler.handled(), [1, 2, 4].map(eventOf));
    assert.equal(handler.maxActive, 1);
  });

  test("a permit handed back once the reply is durable serves another room while the first still sends, and that room stays serial", async () => {
    const d = makeDispatcher({ maxConcurrentRooms: 1 });
    add(A, 1, 2);
    handler.releaseEarly = (item) => item.invocation.eventId === eventOf(1);
    handler.hold = (item) => item.invocation.eventId === eventOf(1);
    d.notify([A]);
    await until(() => handler.calls.length === 1, "room A's first item");
    add(B, 3);
    d.notify([B]);
    await until(() => handler.handled(B).length === 1, "room B served on the handed-back permit");
    await delay(30); // give a broken dispatcher the chance to start room A's second item early
    assert.deepEqual(handler.handled(A), [eventOf(1)], "room A's next item waits for its first to finish");
    handler.hold = () => false;
    await until(() => handler.calls.length === 3 && d.activeRooms === 0, "all served");
    assert.deepEqual(handler.handled(A), [1, 2].map(eventOf));
    assert.equal(handler.maxPerRoom, 1);
    assert.equal(handler.maxActive, 1, "processing never exceeded the one permit");
  });

  test("one notification drains a large backlog without losing or repeating a row", async () => {
    const d = makeDispatcher();
    const ns = Array.from({ length: 200 }, (_, i) => i + 1);
    add(A, ...ns);
    d.notify([A]);
    await until(() => d.activeRooms === 0 && handler.calls.length >= 200, "the backlog drained", 30_000);
    assert.deepEqual(handler.handled(A), ns.map(eventOf));
    assert.equal(store.status().countsByStatus.candidate, 0);
  });

  test("work that arrives while a room is busy is picked up without the poller", async () => {
    const d = makeDispatcher();
    add(A, 1);
    handler.hold = () => true;
    d.notify([A]);
    await until(() => handler.calls.length === 1, "the first call");
    add(A, 2);
    d.notify([A]);
    handler.hold = () => false;
    await until(() => handler.calls.length === 2 && d.activeRooms === 0, "the second call");
    assert.deepEqual(handler.handled(A), [1, 2].map(eventOf));
  });

  test("the poller starts rooms with due work and recovers expired leases", async () => {
    const d = makeDispatcher({ pollIntervalMs: 10 });
    add(A, 1);
    assert.equal(store.nextForRoom(A, 1_000)?.invocation.status, "processing");
    clock.advance(2_000);
    add(B, 2);
    d.start();
    await until(() => handler.calls.length === 2 && d.activeRooms === 0, "both rooms served");
    const recovered = handler.calls.find((c) => c.invocation.eventId === eventOf(1));
    assert.equal(recovered?.kind, "process");
    assert.equal(recovered?.invocation.attemptCount, 2);
    assert.ok(log.lines.some((l) => l.event === "leases_recovered" && l.fields["count"] === 1));
  });

  test("a stored reply is handed over as a send item", async () => {
    const d = makeDispatcher();
    add(A, 1);
    store.nextForRoom(A, 60_000);
    store.commitReady(eventOf(1), replyPayload("hello"));
    d.notify([A]);
    await until(() => handler.calls.length === 1 && d.activeRooms === 0, "the send");
    assert.equal(handler.calls[0]?.kind, "send");
    assert.equal(store.invocation(eventOf(1))?.status, "sent");
  });

  test("stop lets active work finish within the grace period without cancelling it", async () => {
    const d = makeDispatcher();
    add(A, 1);
    handler.hold = () => true;
    d.notify([A]);
    await until(() => handler.calls.length === 1, "the call");
    const stopped = d.stop(10_000);
    handler.hold = () => false;
    await stopped;
    assert.equal(store.invocation(eventOf(1))?.status, "ignored", "finished, not cancelled (a cancelled call hands the lease back)");
  });

  test("stop cancels work still running after the grace period, and leases nothing afterwards", async () => {
    const d = makeDispatcher({ pollIntervalMs: 10 });
    add(A, 1);
    add(B, 2);
    handler.hold = () => true;
    d.start();
    await until(() => handler.calls.length === 2, "both calls");
    await d.stop(20);
    assert.ok(handler.signals.every((s) => s.aborted));
    assert.equal(store.invocation(eventOf(1))?.status, "candidate", "the lease went back");
    add(C, 3);
    d.notify([A, C]);
    await delay(40);
    assert.equal(handler.calls.length, 2, "no lease after stop");
    assert.equal(d.activeRooms, 0);
  });

  test("a crashing handler is logged, its row released with a delay, and other rooms keep being served", async () => {
    const d = makeDispatcher({ maxConcurrentRooms: 1 });
    handler.crash = (item) => item.invocation.roomId === A;
    add(A, 1);
    add(B, 2, 3);
    d.notify([A, B]);
    await until(() => handler.handled(B).length === 2 && d.activeRooms === 0, "room B served");
    const crashed = log.lines.find((l) => l.event === "room_worker_crashed");
    assert.equal(crashed?.level, "error");
    assert.deepEqual(crashed?.fields, { room_id_hash: roomHash(A), code: "internal_error" });
    const row = store.invocation(eventOf(1));
    assert.equal(row?.status, "candidate");
    assert.equal(row?.lastErrorCode, "internal_error");
    assert.equal(row?.availableAtMs, clock.now() + 5_000);
  });

  test("after a crash the room resumes with its oldest invocation first", async () => {
    const d = makeDispatcher({ pollIntervalMs: 10 });
    handler.crash = (_item, call) => call === 1;
    add(A, 1, 2);
    d.start();
    await until(() => handler.calls.length === 1 && d.activeRooms === 0, "the crash");
    await delay(30);
    assert.equal(handler.calls.length, 1, "the crashed head blocks its room during its delay");
    clock.advance(5_000);
    await until(() => handler.calls.length === 3 && d.activeRooms === 0, "the room resumed");
    assert.deepEqual(handler.handled(A), [1, 1, 2].map(eventOf));
  });
});

describe("permit semaphore", () => {
  test("grants permits up to its size, then in FIFO order as they are released", async () => {
    const semaphore = new Semaphore(1);
    const signal = new AbortController().signal;
    const first = await semaphore.acquire(signal);
    const order: string[] = [];
    const second = semaphore.acquire(signal).then((release) => (order.push("second"), release));
    const third = semaphore.acquire(signal).then((release) => (order.push("third"), release));
    assert.equal(semaphore.available, 0);
    first();
    first(); // releasing twice is harmless
    (await second)();
    (await third)();
    assert.deepEqual(order, ["second", "third"]);
    assert.equal(semaphore.available, 1);
  });

  test("an aborted waiter leaves the queue and rejects with the abort reason", async () => {
    const semaphore = new Semaphore(1);
    const release = await semaphore.acquire(new AbortController().signal);
    const controller = new AbortController();
    const waiting = semaphore.acquire(controller.signal);
    controller.abort(new Error("stopping"));
    await assert.rejects(waiting, /stopping/);
    release();
    assert.equal(semaphore.available, 1, "the permit was not handed to the aborted waiter");
  });

  test("rejects a non-positive size", () => {
    assert.throws(() => new Semaphore(0), RangeError);
  });
});
