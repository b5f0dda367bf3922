// Issue 18, pure parts: power evaluation, conditions of a diagnosis, alias
// decisions (a repointed alias is never followed). The runtime conditions
// (one warning per room and condition, sync and refused sends keeping them
// current) are in room-tracker.test.ts.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { resolveAliases } from "../../../src/rooms/room-aliases.ts";
import { conditionsOf, messagePower, roomVersionOf, type RoomDiagnosis } from "../../../src/rooms/room-diagnosis.ts";
import { roomFix } from "../../../src/check/room-fixes.ts";
import { err, ok } from "../../../src/errors.ts";
import { MatrixError } from "../../../src/matrix/errors.ts";

const LISA = "@lisa:example.org";
const ROOM = "!room:example.org";

describe("LISA-ROOMS-01: room power levels", () => {
  const cases: { name: string; power: Record<string, unknown> | null; create: { sender: string | null; content: Record<string, unknown> }; canSend: boolean }[] = [
    { name: "no power levels event: anyone may send", power: null, create: { sender: "@alice:example.org", content: { room_version: "10" } }, canSend: true },
    { name: "users_default 0, events_default 0", power: { users_default: 0, events_default: 0 }, create: { sender: null, content: {} }, canSend: true },
    { name: "events_default above Lisa's default level", power: { users_default: 0, events_default: 50 }, create: { sender: null, content: {} }, canSend: false },
    { name: "m.room.message raised above Lisa's own level", power: { users: { [LISA]: 10 }, events: { "m.room.message": 20 } }, create: { sender: null, content: {} }, canSend: false },
    { name: "Lisa's own level meets the message level", power: { users: { [LISA]: 50 }, events_default: 50 }, create: { sender: null, content: {} }, canSend: true },
    { name: "levels given as strings (old rooms)", power: { users: { [LISA]: "5" }, events_default: "10" }, create: { sender: null, content: {} }, canSend: false },
    { name: "room version 12 creator outranks power levels", power: { users: {}, events_default: 100 }, create: { sender: LISA, content: { room_version: "12" } }, canSend: true },
    { name: "room version 12 additional creator", power: { events_default: 100 }, create: { sender: "@a:b", content: { room_version: "12", additional_creators: [LISA] } }, canSend: true },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const power = c.power === null ? null : { sender: "@alice:example.org", content: c.power };
      assert.equal(messagePower(LISA, power, c.create).canSend, c.canSend);
    });
  }

  test("the room version defaults to 1 when the create event names none", () => {
    assert.equal(roomVersionOf({ sender: null, content: {} }), "1");
    assert.equal(roomVersionOf({ sender: null, content: { room_version: "11" } }), "11");
    assert.equal(roomVersionOf(null), null);
  });
});

describe("LISA-ROOMS-01: conditions of a diagnosis", () => {
  const base: RoomDiagnosis = { roomId: ROOM, joined: true, invited: false, encrypted: false, power: { canSend: true, level: 0, required: 0 }, roomVersion: "10", failure: null };
  test("an ordinary joined room has none; each problem maps to its code", () => {
    assert.deepEqual(conditionsOf(base), []);
    assert.deepEqual(conditionsOf({ ...base, joined: false, invited: true }), ["room_invite_pending"]);
    assert.deepEqual(conditionsOf({ ...base, joined: false }), ["room_not_joined"]);
    assert.deepEqual(conditionsOf({ ...base, encrypted: true, power: { canSend: false, level: 0, required: 50 } }), ["room_encrypted", "room_send_forbidden"]);
  });

  test("each fix names the room and tells what to do, never a token", () => {
    const facts = { homeserverUrl: "https://hs.example.org/?access_token=x", userId: LISA, room: ROOM, source: { key: "matrix.allowed_room_ids" } } as const;
    const invite = roomFix("room_invite_pending", facts);
    assert.match(invite, /accept the invitation/);
    assert.match(invite, /https:\/\/hs\.example\.org\/_matrix\/client\/v3\/rooms\/!room%3Aexample\.org\/join/);
    assert.ok(!invite.includes("access_token=x"));
    assert.match(roomFix("room_encrypted", facts), /create a new room with encryption off/);
    assert.match(roomFix("room_send_forbidden", { ...facts, power: { canSend: false, level: 0, required: 50 } }), /Lisa has 0, sending messages needs 50/);
  });
});

describe("LISA-ROOMS-01: alias resolution", () => {
  const directory = (map: Record<string, string | null | "fail">) => ({
    resolveAlias: async (alias: string) => {
      const value = map[alias];
      if (value === "fail") return err(new MatrixError("matrix_network", { errcode: null, httpStatus: null, retryAfterMs: null }, true));
      return ok(value ?? null);
    },
  });
  const signal = new AbortController().signal;

  test("a new alias is served as the room it resolves to", async () => {
    const [o] = await resolveAliases(directory({ "#a:x": "!a:x" }), ["#a:x"], new Set(), () => null, signal);
    assert.deepEqual([o?.served, o?.code], ["!a:x", null]);
  });

  test("an alias that no longer resolves is reported and not served", async () => {
    const [o] = await resolveAliases(directory({}), ["#a:x"], new Set(), () => "!a:x", signal);
    assert.deepEqual([o?.served, o?.code], [null, "room_alias_unresolved"]);
  });

  test("an alias repointed to another room is reported and neither room is served through it", async () => {
    const [o] = await resolveAliases(directory({ "#a:x": "!new:x" }), ["#a:x"], new Set(), () => "!old:x", signal);
    assert.deepEqual([o?.served, o?.code, o?.resolved, o?.known], [null, "room_alias_moved", "!new:x", "!old:x"]);
  });

  test("a repointed alias is followed only when the operator also lists the new room id", async () => {
    const [o] = await resolveAliases(directory({ "#a:x": "!new:x" }), ["#a:x"], new Set(["!new:x"]), () => "!old:x", signal);
    assert.deepEqual([o?.served, o?.code], ["!new:x", null]);
  });

  test("a failed lookup keeps the known room served and reports no alias condition", async () => {
    const [known] = await resolveAliases(directory({ "#a:x": "fail" }), ["#a:x"], new Set(), () => "!a:x", signal);
    assert.deepEqual([known?.served, known?.code, known?.lookupError?.code], ["!a:x", null, "matrix_network"]);
    const [unknown] = await resolveAliases(directory({ "#a:x": "fail" }), ["#a:x"], new Set(), () => null, signal);
    assert.deepEqual([unknown?.served, unknown?.code], [null, "room_alias_unresolved"]);
  });
});
