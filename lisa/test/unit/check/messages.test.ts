// Issue 26 point 3: the texts `lisa check` prints are true. Fix texts name the
// configuration key each room came from, the encrypted-room fix says to
// restart, URLs carry no doubled or trailing slash, and the Matrix note says
// what the check really does (its own device, logged out; nothing replaced).

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { checkDeviceId, matrixDeviceNote } from "../../../src/check/preflight-matrix.ts";
import { displayUrl } from "../../../src/check/preflight-result.ts";
import { roomFix, type FixFacts, type RoomSource } from "../../../src/check/room-fixes.ts";
import { ROOM_CODES, type RoomCode } from "../../../src/rooms/room-diagnosis.ts";

const LISA = "@lisa:example.org";
const ROOM = "!room:example.org";
const ALIAS = "#lisa:example.org";
const BY_ID: RoomSource = { key: "matrix.allowed_room_ids" };
const BY_ALIAS: RoomSource = { key: "matrix.allowed_room_aliases", alias: ALIAS };
const ROOM_STATE: readonly RoomCode[] = [ROOM_CODES.invitePending, ROOM_CODES.notJoined, ROOM_CODES.encrypted, ROOM_CODES.sendForbidden, ROOM_CODES.lookupFailed];

function facts(source: RoomSource, homeserverUrl = "https://hs.example.org"): FixFacts {
  return { homeserverUrl, userId: LISA, room: ROOM, source, power: { canSend: false, level: 0, required: 50 } };
}

describe("LISA-CHECKMSG-01: every room fix names the configuration key the room came from", () => {
  for (const code of ROOM_STATE) {
    test(`${code}: a room listed by id names matrix.allowed_room_ids, a room reached through an alias names the alias and matrix.allowed_room_aliases`, () => {
      const byId = roomFix(code, facts(BY_ID));
      assert.match(byId, /matrix\.allowed_room_ids/);
      assert.doesNotMatch(byId, /matrix\.allowed_room_aliases/);
      const byAlias = roomFix(code, facts(BY_ALIAS));
      assert.ok(byAlias.includes(`${ALIAS} in matrix.allowed_room_aliases`), byAlias);
      assert.doesNotMatch(byAlias, /matrix\.allowed_room_ids/, "the room did not come from matrix.allowed_room_ids");
    });
  }

  test("room_not_joined for an alias's room says to check the alias, not the room id", () => {
    const text = roomFix(ROOM_CODES.notJoined, facts(BY_ALIAS));
    assert.match(text, /or check the alias #lisa:example\.org in matrix\.allowed_room_aliases$/);
    assert.match(roomFix(ROOM_CODES.notJoined, facts(BY_ID)), /or check the room id in matrix\.allowed_room_ids$/);
  });

  test("alias conditions name matrix.allowed_room_aliases", () => {
    const alias: FixFacts = { ...facts(BY_ALIAS), room: ALIAS, resolved: "!new:example.org", known: ROOM };
    assert.match(roomFix(ROOM_CODES.aliasUnresolved, alias), /correct it in matrix\.allowed_room_aliases/);
    assert.match(roomFix(ROOM_CODES.aliasMoved, alias), /^the alias #lisa:example\.org in matrix\.allowed_room_aliases now points to !new:example\.org/);
    assert.match(roomFix(ROOM_CODES.lookupFailed, alias), /about #lisa:example\.org \(allowed by matrix\.allowed_room_aliases\)/);
  });
});

describe("LISA-CHECKMSG-01: the room_encrypted fix", () => {
  test("says to allow the new room under the same key and restart Lisa after changing the allowlist", () => {
    assert.match(roomFix(ROOM_CODES.encrypted, facts(BY_ID)), /allow the new room in matrix\.allowed_room_ids instead, and restart Lisa \(she reads the allowlist at start\)$/);
    assert.match(roomFix(ROOM_CODES.encrypted, facts(BY_ALIAS)), /allow the new room in matrix\.allowed_room_aliases instead, and restart Lisa/);
  });
});

describe("LISA-CHECKMSG-01: printed URLs", () => {
  test("have no trailing slash, and joined paths no doubled slash", () => {
    assert.equal(displayUrl("https://hs.example.org/"), "https://hs.example.org");
    assert.equal(displayUrl("https://hs.example.org//"), "https://hs.example.org");
    assert.equal(displayUrl("http://127.0.0.1:8080/v1/?key=secret#x"), "http://127.0.0.1:8080/v1");
    assert.equal(displayUrl("http://127.0.0.1:8080/v1"), "http://127.0.0.1:8080/v1");
    for (const url of ["https://hs.example.org", "https://hs.example.org/", "https://hs.example.org/?access_token=x"]) {
      const unresolved = roomFix(ROOM_CODES.aliasUnresolved, { ...facts(BY_ALIAS, url), room: ALIAS });
      assert.match(unresolved, /does not resolve on https:\/\/hs\.example\.org: correct it/, unresolved);
      const invite = roomFix(ROOM_CODES.invitePending, facts(BY_ID, url));
      assert.match(invite, /POST https:\/\/hs\.example\.org\/_matrix\/client\/v3\/rooms\/!room%3Aexample\.org\/join /);
      for (const text of [unresolved, invite]) assert.doesNotMatch(text.replaceAll("https://", ""), /\/\//);
    }
  });
});

describe("LISA-CHECKMSG-01: the check's Matrix note", () => {
  test("names the check's own device and Lisa's, says it is logged out, and says nothing about replacing tokens", () => {
    const note = matrixDeviceNote("LISA_CHECK", "LISA");
    assert.equal(note, "the check used a device of its own (LISA_CHECK), which it logs out when it ends; Lisa's device LISA and its token are left alone");
    assert.doesNotMatch(note, /replace|logs in again/);
  });

  test("the check's device id is never Lisa's and fits the 255-character limit", () => {
    assert.equal(checkDeviceId("LISATEST"), "LISATEST_CHECK");
    for (const length of [1, 6, 249, 250, 254, 255]) {
      // Plain ids, and ids that already end in _CHECK (the shortening must not produce Lisa's own).
      for (const lisa of ["D".repeat(length), `${"D".repeat(Math.max(0, length - 6))}_CHECK`]) {
        const id = checkDeviceId(lisa);
        assert.notEqual(id, lisa, `length ${lisa.length}`);
        assert.ok(id.length <= 255, `length ${lisa.length}: ${id.length}`);
        assert.ok(id.endsWith("_CHECK"));
      }
    }
  });
});
