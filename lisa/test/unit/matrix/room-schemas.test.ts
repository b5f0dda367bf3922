// Issue 18: what a sync response and the room-inspection endpoints tell about
// an allowed room: encryption (state or timeline), invitations and leaves,
// and state events with or without `format=event`.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { normalizeDirectory, normalizeJoinedRooms, normalizeStateEvent } from "../../../src/matrix/room-schemas.ts";
import { normalizeSync } from "../../../src/matrix/schemas.ts";

const ROOM = "!room:example.org";
const event = (type: string, extra: Record<string, unknown> = {}) => ({
  event_id: `$${type}`, type, sender: "@alice:example.org", origin_server_ts: 1, content: {}, ...extra,
});

describe("LISA-ROOMS-01: room facts in sync responses", () => {
  test("encryption in the room state or an m.room.encrypted timeline event marks the room encrypted", () => {
    const body = {
      next_batch: "s1",
      rooms: {
        join: {
          [ROOM]: { state: { events: [event("m.room.encryption", { state_key: "" })] }, timeline: { events: [] } },
          "!timeline:example.org": { timeline: { events: [event("m.room.encrypted")] } },
          "!plain:example.org": { timeline: { events: [event("m.room.message")] } },
        },
      },
    };
    const result = normalizeSync(body, () => undefined);
    assert.ok(result.ok);
    assert.deepEqual(result.value.rooms.map((r) => [r.roomId, r.encrypted ?? false]), [
      [ROOM, true], ["!timeline:example.org", true], ["!plain:example.org", false],
    ]);
  });

  test("invited and left rooms are listed by id, whatever their entries hold", () => {
    const result = normalizeSync({ next_batch: "s1", rooms: { invite: { [ROOM]: { invite_state: { events: [] } } }, leave: { "!gone:example.org": {} } } }, () => undefined);
    assert.ok(result.ok);
    assert.deepEqual(result.value.invitedRoomIds, [ROOM]);
    assert.deepEqual(result.value.leftRoomIds, ["!gone:example.org"]);
    assert.deepEqual(result.value.rooms, []);
  });
});

describe("LISA-ROOMS-01: room inspection responses", () => {
  test("a state read accepts the full event (format=event) or the content alone", () => {
    const full = normalizeStateEvent({ type: "m.room.create", sender: "@alice:example.org", content: { room_version: "12" }, event_id: "$c" });
    assert.ok(full.ok);
    assert.deepEqual(full.value, { sender: "@alice:example.org", content: { room_version: "12" } });
    const content = normalizeStateEvent({ room_version: "10" });
    assert.ok(content.ok);
    assert.deepEqual(content.value, { sender: null, content: { room_version: "10" } });
    assert.equal(normalizeStateEvent([1]).ok, false);
  });

  test("joined rooms and the directory need their documented fields", () => {
    assert.deepEqual(normalizeJoinedRooms({ joined_rooms: [ROOM] }), { ok: true, value: [ROOM] });
    assert.equal(normalizeJoinedRooms({}).ok, false);
    assert.deepEqual(normalizeDirectory({ room_id: ROOM, servers: [] }), { ok: true, value: ROOM });
    assert.equal(normalizeDirectory({ servers: [] }).ok, false);
  });
});
