// Encrypted rooms on (LISA-E2EE-07, -09, -12), the pure parts: an encrypted
// room is served, not a condition, and is reported for `lisa status`; a room
// that turns encryption on while Lisa runs is followed from the batch that
// shows it; the sent-reply lookup finds an encrypted reply by the marker it
// carries outside its ciphertext.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { RoomConditions } from "../../../src/app/room-conditions.ts";
import { RoomTracker } from "../../../src/app/room-tracker.ts";
import { ok } from "../../../src/errors.ts";
import { createSentReplyLookup, REPLY_MARKER_KEY } from "../../../src/invocation/sent-lookup.ts";
import { createLogger } from "../../../src/log/logger.ts";
import type { ForwardHistoryPort, RawEvent, SyncBatch } from "../../../src/matrix/port.ts";
import { RoomStates } from "../../../src/rooms/room-state.ts";

const LISA = "@lisa:example.org";
const ROOM = "!room:example.org";
const signal = new AbortController().signal;

function event(n: number, parts: Partial<RawEvent>): RawEvent {
  return { event_id: `$e${n}:example.org`, type: "m.room.message", sender: "@alice:example.org", origin_server_ts: 1_700_000_000_000 + n, content: {}, ...parts };
}
const encryption = event(1, { type: "m.room.encryption", state_key: "", content: { algorithm: "m.megolm.v1.aes-sha2" } });
const batch = (events: readonly RawEvent[]): SyncBatch => ({ nextBatch: "n", rooms: [{ roomId: ROOM, events, limited: false, prevBatch: null }] });

function tracker(servesEncrypted: boolean) {
  const rows = new Set<string>();
  const reported: string[] = [];
  const log = createLogger({ level: "ERROR", destination: { write: () => undefined } });
  const store = {
    raiseRoomCondition: (room: string, code: string) => (rows.has(`${room} ${code}`) ? false : (rows.add(`${room} ${code}`), true)),
    clearRoomCondition: (room: string, code: string) => rows.delete(`${room} ${code}`),
  };
  const t = new RoomTracker(new RoomStates(LISA, [ROOM], { servesEncrypted }), new RoomConditions(store, log), log);
  if (servesEncrypted) t.onEncryption((roomId, encrypted) => reported.push(`${roomId} ${encrypted}`));
  return { t, rows, reported };
}

describe("LISA-E2EE-09: with encrypted rooms on, an encrypted room is served", () => {
  test("a room that turns encryption on while Lisa runs stays open, raises no condition and is reported once", () => {
    const w = tracker(true);
    w.t.observe(batch([event(0, { content: { msgtype: "m.text", body: "hi" } })]));
    assert.equal(w.t.encrypted(ROOM), null);
    w.t.observe(batch([encryption]));
    w.t.observe(batch([event(2, { type: "m.room.encrypted" })]));
    assert.equal(w.t.gate(ROOM).kind, "open");
    assert.equal(w.t.held(ROOM), false);
    assert.equal(w.t.encrypted(ROOM), true);
    assert.deepEqual([...w.rows], []);
    assert.deepEqual(w.reported, [`${ROOM} true`]);
  });

  test("off, the same room is ignored with room_encrypted as before", () => {
    const w = tracker(false);
    w.t.observe(batch([encryption]));
    assert.deepEqual(w.t.gate(ROOM), { kind: "ignore", code: "room_encrypted" });
    assert.deepEqual([...w.rows], [`${ROOM} room_encrypted`]);
  });
});

describe("LISA-E2EE-07: an encrypted reply is found in the room by its marker", () => {
  test("the lookup matches Lisa's m.room.encrypted event with the marker outside its ciphertext, and no one else's", async () => {
    const txnId = "lisa_abc";
    const forged = event(3, { type: "m.room.encrypted", sender: "@mallory:example.org", content: { ciphertext: "x", [REPLY_MARKER_KEY]: txnId } });
    const reply = event(4, { type: "m.room.encrypted", sender: LISA, content: { algorithm: "m.megolm.v1.aes-sha2", ciphertext: "y", [REPLY_MARKER_KEY]: txnId } });
    const history: ForwardHistoryPort = {
      eventsAfter: async () => ok({ events: [forged, reply], next: null }),
      messagesForward: async () => ok({ events: [], next: null }),
    };
    const found = await createSentReplyLookup(history, LISA)(ROOM, "$invoking:example.org", txnId, signal);
    assert.deepEqual(found, ok(reply.event_id));
  });
});
