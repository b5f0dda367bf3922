import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { StateStoreError } from "../../../src/errors.ts";
import { RoomDispatcher, type DispatcherStore } from "../../../src/invocation/dispatcher.ts";
import { silentLogger } from "../../../src/log/logger.ts";
import type { InvocationRow, WorkItem } from "../../../src/state/types.ts";

function item(eventId: string, roomId: string): WorkItem {
  const invocation: InvocationRow = {
    eventId, roomId, senderId: "@a:x", receivedAtMs: 1, status: "processing", rawEventJson: "{}", responseJson: null,
    matrixTxnId: "lisa_x", sentEventId: null, attemptCount: 1, availableAtMs: 0, lastErrorCode: null, updatedAtMs: 0,
  };
  return { kind: "process", invocation };
}

function storeWith(items: WorkItem[], released: string[]): DispatcherStore {
  return {
    roomsWithWork: () => [...new Set(items.map((i) => i.invocation.roomId))],
    nextForRoom: (roomId: string) => {
      const index = items.findIndex((i) => i.invocation.roomId === roomId);
      return index < 0 ? null : items.splice(index, 1)[0] ?? null;
    },
    recoverExpiredLeases: () => 0,
    releaseLease: (eventId: string) => {
      released.push(eventId);
      return true;
    },
  } as unknown as DispatcherStore;
}

describe("dispatcher fault isolation", () => {
  test("a database failure inside a room worker stops the service instead of being retried", async () => {
    const fatal: string[] = [];
    const released: string[] = [];
    const dispatcher = new RoomDispatcher({
      store: storeWith([item("$1", "!a:x")], released),
      handler: async () => {
        throw new StateStoreError("state_disk_full", "state database write failed (state_disk_full)");
      },
      settings: { maxConcurrentRooms: 2, leaseMs: 60_000, pollIntervalMs: 60_000 },
      log: silentLogger,
      onFatal: (code) => fatal.push(code),
    });
    dispatcher.start();
    await new Promise((resolve) => setImmediate(resolve));
    await dispatcher.stop(1_000);
    assert.deepEqual(fatal, ["state_disk_full"]);
    assert.deepEqual(released, [], "a fatal ledger failure does not touch the ledger again");
  });

  test("an ordinary bug in one room is logged, its row released, and other rooms are still served", async () => {
    const fatal: string[] = [];
    const released: string[] = [];
    const handled: string[] = [];
    const dispatcher = new RoomDispatcher({
      store: storeWith([item("$bad", "!a:x"), item("$good", "!b:x")], released),
      handler: async (work) => {
        if (work.invocation.eventId === "$bad") throw new TypeError("bug");
        handled.push(work.invocation.eventId);
      },
      settings: { maxConcurrentRooms: 1, leaseMs: 60_000, pollIntervalMs: 60_000 },
      log: silentLogger,
      onFatal: (code) => fatal.push(code),
    });
    dispatcher.start();
    await new Promise((resolve) => setImmediate(resolve));
    await dispatcher.stop(1_000);
    assert.deepEqual(fatal, []);
    assert.deepEqual(released, ["$bad"]);
    assert.deepEqual(handled, ["$good"]);
  });
});
