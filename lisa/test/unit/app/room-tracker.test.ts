// Issue 26 point 2 (and the runtime half of LISA-ROOMS-01), pure parts: each
// allowed room is in one state, kept from sync batches and refused sends;
// exactly its current conditions are rows of the ledger, each change logged
// once; a room that lets Lisa post again releases its waiting work once.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { RoomConditions } from "../../../src/app/room-conditions.ts";
import { RoomTracker } from "../../../src/app/room-tracker.ts";
import { err, ok } from "../../../src/errors.ts";
import { createLogger } from "../../../src/log/logger.ts";
import { MatrixError } from "../../../src/matrix/errors.ts";
import type { RawEvent, RoomInspectPort, StateEvent, SyncBatch, SyncRoom } from "../../../src/matrix/port.ts";
import type { RoomDiagnosis } from "../../../src/rooms/room-diagnosis.ts";
import { RoomStates } from "../../../src/rooms/room-state.ts";

const LISA = "@lisa:example.org";
const ROOM = "!room:example.org";
const OTHER = "!other:example.org";
const forbidden = new MatrixError("matrix_forbidden", { errcode: "M_FORBIDDEN", httpStatus: 403, retryAfterMs: null }, false);
const unreachable = new MatrixError("matrix_unreachable", { errcode: null, httpStatus: null, retryAfterMs: null }, true);

let serial = 0;
function state(type: string, stateKey: string, content: Record<string, unknown>, sender = "@alice:example.org"): RawEvent {
  serial += 1;
  return { event_id: `$s${serial}:example.org`, type, sender, origin_server_ts: 1_700_000_000_000 + serial, state_key: stateKey, content };
}
const power = (eventsDefault: number, lisa = 0): RawEvent =>
  state("m.room.power_levels", "", { users: { "@alice:example.org": 100, [LISA]: lisa }, users_default: 0, events_default: eventsDefault });
const joinedRoom = (events: readonly RawEvent[] = [], extra: Partial<SyncRoom> = {}): SyncRoom =>
  ({ roomId: ROOM, events, limited: false, prevBatch: null, ...extra });
const batch = (parts: Partial<SyncBatch>): SyncBatch => ({ nextBatch: "n", rooms: [], ...parts });

function diagnosis(parts: Partial<RoomDiagnosis>): RoomDiagnosis {
  return { roomId: ROOM, joined: true, invited: false, encrypted: false, power: { canSend: true, level: 0, required: 0 }, roomVersion: "10", failure: null, ...parts };
}

function world(rooms: readonly string[] = [ROOM]) {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({ level: "DEBUG", destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
  const rows = new Map<string, number>();
  const store = {
    raiseRoomCondition: (room: string, code: string) => (rows.has(`${room} ${code}`) ? false : (rows.set(`${room} ${code}`, 1), true)),
    clearRoomCondition: (room: string, code: string) => rows.delete(`${room} ${code}`),
  };
  const tracker = new RoomTracker(new RoomStates(LISA, rooms), new RoomConditions(store, log), log);
  const released: string[] = [];
  tracker.onRelease((roomId) => released.push(roomId));
  const current = (): string[] => [...rows.keys()].sort();
  const logged = (event: string): string[] => lines.filter((l) => l["event"] === event).map((l) => String(l["code"] ?? ""));
  return { tracker, lines, current, logged, released };
}

describe("LISA-ROOMSTATE-01: conditions are a state per room, not a log of codes", () => {
  test("an invitation while Lisa runs replaces room_not_joined; the join clears it; a kick makes the room not joined again", () => {
    const w = world();
    w.tracker.seed([diagnosis({ joined: false, encrypted: null, power: null })]);
    assert.deepEqual(w.current(), [`${ROOM} room_not_joined`]);
    w.tracker.observe(batch({ invitedRoomIds: [ROOM, OTHER] }));
    assert.deepEqual(w.current(), [`${ROOM} room_invite_pending`], "exactly one current condition, and rooms outside the allowlist are ignored");
    w.tracker.observe(batch({ rooms: [joinedRoom([state("m.room.member", LISA, { membership: "join" }, LISA)], { state: [power(0)] })] }));
    assert.deepEqual(w.current(), []);
    w.tracker.observe(batch({ leftRoomIds: [ROOM] }));
    assert.deepEqual(w.current(), [`${ROOM} room_not_joined`]);
    assert.deepEqual(w.logged("room_condition"), ["room_not_joined", "room_invite_pending", "room_not_joined"], "each change logged once");
    assert.deepEqual(w.logged("room_condition_cleared"), ["room_not_joined", "room_invite_pending"]);
  });

  test("a kick seen as Lisa's own leave in the timeline ends membership too, and holds the room", () => {
    const w = world();
    w.tracker.seed([diagnosis({})]);
    w.tracker.observe(batch({ rooms: [joinedRoom([state("m.room.member", LISA, { membership: "leave" })])] }));
    assert.deepEqual(w.current(), [`${ROOM} room_not_joined`]);
    assert.equal(w.tracker.held(ROOM), true);
  });

  test("the encrypted room produces exactly one warning however many encrypted events arrive, and its invocations are ignored", () => {
    const w = world();
    w.tracker.seed([diagnosis({})]);
    assert.deepEqual(w.tracker.gate(ROOM), { kind: "open" });
    for (let i = 0; i < 5; i += 1) w.tracker.observe(batch({ rooms: [joinedRoom([], { encrypted: true })] }));
    assert.deepEqual(w.logged("room_condition"), ["room_encrypted"]);
    assert.deepEqual(w.current(), [`${ROOM} room_encrypted`]);
    assert.deepEqual(w.tracker.gate(ROOM), { kind: "ignore", code: "room_encrypted" });
    assert.ok(!JSON.stringify(w.lines).includes(ROOM), "only the hashed room is logged");
  });

  test("m.room.encryption in a joined room's state section (a gap, a join) makes it encrypted from that batch on", () => {
    const w = world();
    w.tracker.seed([diagnosis({})]);
    w.tracker.observe(batch({ rooms: [joinedRoom([], { state: [state("m.room.encryption", "", { algorithm: "m.megolm.v1.aes-sha2" })] })] }));
    assert.deepEqual(w.tracker.gate(ROOM), { kind: "ignore", code: "room_encrypted" });
  });

  test("a power change from the sync holds the room; raising Lisa's level clears it and releases the room once", () => {
    const w = world();
    w.tracker.seed([diagnosis({})]);
    w.tracker.observe(batch({ rooms: [joinedRoom([power(50)])] }));
    assert.deepEqual(w.current(), [`${ROOM} room_send_forbidden`]);
    assert.deepEqual(w.tracker.gate(ROOM), { kind: "hold", code: "room_send_forbidden" });
    assert.equal(w.tracker.held(ROOM), true);
    w.tracker.observe(batch({ rooms: [joinedRoom([power(50, 50)])] }));
    assert.deepEqual(w.current(), []);
    assert.equal(w.tracker.held(ROOM), false);
    w.tracker.observe(batch({ rooms: [joinedRoom([state("m.room.topic", "", { topic: "t" })])] }));
    assert.deepEqual(w.released, [ROOM], "released once, when the hold ended");
    assert.deepEqual(w.logged("room_condition_cleared"), ["room_send_forbidden"]);
  });

  test("a room diagnosed without power to send is held from the start; lowering the message level releases it", () => {
    const w = world();
    w.tracker.seed([diagnosis({ power: { canSend: false, level: 0, required: 50 } })]);
    assert.equal(w.tracker.held(ROOM), true);
    w.tracker.observe(batch({ rooms: [joinedRoom([power(0)])] }));
    assert.equal(w.tracker.held(ROOM), false);
    assert.deepEqual(w.released, [ROOM]);
  });

  test("a diagnosis whose state reads failed leaves the encryption and power rows as they were", () => {
    const w = world();
    w.tracker.seed([diagnosis({ encrypted: null, power: null, failure: unreachable })]);
    assert.deepEqual(w.current(), []);
    assert.deepEqual(w.logged("room_condition_cleared"), []);
    assert.deepEqual(w.tracker.gate(ROOM), { kind: "open" }, "unknown is not a reason to hold");
  });
});

describe("LISA-ROOMSTATE-01: a refused send reads why", () => {
  function inspect(joined: readonly string[] | null, levels: StateEvent | null | "fail"): Pick<RoomInspectPort, "joinedRooms" | "stateEvent"> {
    return {
      joinedRooms: async () => (joined === null ? err(unreachable) : ok(joined)),
      stateEvent: async () => (levels === "fail" ? err(unreachable) : ok(levels)),
    };
  }
  const refusing = { sendMessage: async () => err(forbidden), setTyping: async () => ok(undefined), tokenGeneration: () => 1 };
  const signal = new AbortController().signal;

  test("a 403 while joined reads the power levels: not enough power holds the room as room_send_forbidden", async () => {
    const w = world();
    w.tracker.seed([diagnosis({})]);
    const writes = w.tracker.watchSends(refusing, inspect([ROOM], { sender: "@alice:example.org", content: { events_default: 50 } }));
    await writes.sendMessage(ROOM, "t1", {}, signal);
    await writes.sendMessage(ROOM, "t2", {}, signal);
    assert.deepEqual(w.current(), [`${ROOM} room_send_forbidden`]);
    assert.deepEqual(w.logged("room_condition"), ["room_send_forbidden"]);
    assert.equal(w.tracker.held(ROOM), true);
  });

  test("a 403 after Lisa left is reported as not joined", async () => {
    const w = world();
    w.tracker.seed([diagnosis({})]);
    await w.tracker.watchSends(refusing, inspect([], null)).sendMessage(ROOM, "t1", {}, signal);
    assert.deepEqual(w.current(), [`${ROOM} room_not_joined`]);
  });

  test("a 403 the room's state does not explain, or a failed read, changes no condition", async () => {
    const w = world();
    w.tracker.seed([diagnosis({})]);
    await w.tracker.watchSends(refusing, inspect([ROOM], null)).sendMessage(ROOM, "t1", {}, signal);
    await w.tracker.watchSends(refusing, inspect(null, null)).sendMessage(ROOM, "t2", {}, signal);
    await w.tracker.watchSends(refusing, inspect([ROOM], "fail")).sendMessage(ROOM, "t3", {}, signal);
    assert.deepEqual(w.current(), []);
    assert.equal(w.tracker.held(ROOM), false);
    assert.deepEqual(w.logged("room_state_read_failed"), ["matrix_unreachable", "matrix_unreachable"]);
  });
});
