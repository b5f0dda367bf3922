import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  loginFlowsSchema, loginResponseSchema, normalizeContext, normalizeEvent, normalizeMessages, normalizeRelations,
  normalizeSync, normalizeWhoami, refreshResponseSchema, sendResponseSchema,
} from "../../../src/matrix/schemas.ts";
import { parseBody, readErrorBody } from "../../../src/matrix/wire.ts";
import { ev, ROOM } from "./harness.ts";

function collectDrops(): { drops: string[]; onDrop: (code: string) => void } {
  const drops: string[] = [];
  return { drops, onDrop: (code) => drops.push(code) };
}

describe("sync response", () => {
  test("normalises joined rooms with events, limited and prev_batch", () => {
    const { drops, onDrop } = collectDrops();
    const result = normalizeSync({
      next_batch: "s2",
      rooms: {
        join: { [ROOM]: { timeline: { events: [ev("$a"), ev("$b")], limited: true, prev_batch: "p1" }, state: { events: [] } } },
        invite: { "!other:localhost": {} },
        leave: { "!gone:localhost": { timeline: { events: [ev("$z")] } } },
      },
      presence: { events: [] },
    }, onDrop);
    assert.ok(result.ok);
    assert.equal(result.value.nextBatch, "s2");
    assert.deepEqual(result.value.rooms.map((r) => r.roomId), [ROOM]);
    const room = result.value.rooms[0];
    assert.deepEqual(room?.events.map((e) => e.event_id), ["$a", "$b"]);
    assert.equal(room?.limited, true);
    assert.equal(room?.prevBatch, "p1");
    assert.deepEqual(drops, []);
  });

  test("treats absent limited as false and absent prev_batch as null", () => {
    const result = normalizeSync({ next_batch: "s2", rooms: { join: { [ROOM]: { timeline: { events: [] } } } } }, () => undefined);
    assert.ok(result.ok);
    assert.deepEqual(result.value.rooms[0], { roomId: ROOM, events: [], limited: false, prevBatch: null });
  });

  test("accepts a response without rooms", () => {
    const result = normalizeSync({ next_batch: "s3" }, () => undefined);
    assert.ok(result.ok);
    assert.deepEqual(result.value.rooms, []);
  });

  test("rejects a response lacking next_batch as matrix_bad_response", () => {
    const result = normalizeSync({ rooms: { join: {} } }, () => undefined);
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.error.code, "matrix_bad_response");
  });

  test("drops only the malformed events and keeps the rest of the batch", () => {
    const { drops, onDrop } = collectDrops();
    const malformed = [
      { type: "m.room.message", sender: "@a:localhost", origin_server_ts: 1, content: {} },
      ev("$noTs", { origin_server_ts: "yesterday" }),
      ev("$noContent", { content: undefined }),
      ev("$arrayContent", { content: [] }),
      "not an event",
      ev("$otherRoom", { room_id: "!else:localhost" }),
    ];
    const result = normalizeSync({
      next_batch: "s2",
      rooms: { join: { [ROOM]: { timeline: { events: [ev("$ok1"), ...malformed, ev("$ok2")] } } } },
    }, onDrop);
    assert.ok(result.ok);
    assert.deepEqual(result.value.rooms[0]?.events.map((e) => e.event_id), ["$ok1", "$ok2"]);
    assert.deepEqual(drops, [
      "matrix_event_malformed", "matrix_event_malformed", "matrix_event_malformed", "matrix_event_malformed",
      "matrix_event_malformed", "matrix_event_room_mismatch",
    ]);
  });

  test("drops a joined room whose timeline has the wrong type", () => {
    const { drops, onDrop } = collectDrops();
    const result = normalizeSync({ next_batch: "s2", rooms: { join: { [ROOM]: { timeline: "oops" }, "!b:localhost": {} } } }, onDrop);
    assert.ok(result.ok);
    assert.deepEqual(result.value.rooms.map((r) => r.roomId), ["!b:localhost"]);
    assert.deepEqual(drops, ["matrix_room_malformed"]);
  });

  test("strips unknown top-level event fields but keeps content and unsigned", () => {
    const result = normalizeSync({
      next_batch: "s2",
      rooms: { join: { [ROOM]: { timeline: { events: [ev("$a", { extra: 1, unsigned: { age: 5 }, state_key: "" })] } } } },
    }, () => undefined);
    assert.ok(result.ok);
    const event = result.value.rooms[0]?.events[0];
    assert.deepEqual(event, { ...ev("$a"), unsigned: { age: 5 }, state_key: "" });
  });
});

describe("auth responses", () => {
  test("login response requires user, device and access token; refresh and expiry optional", () => {
    assert.ok(parseBody(loginResponseSchema, { user_id: "@l:x", device_id: "D", access_token: "t" }).ok);
    const full = parseBody(loginResponseSchema, { user_id: "@l:x", device_id: "D", access_token: "t", refresh_token: "r", expires_in_ms: 5 });
    assert.ok(full.ok);
    assert.equal(full.value.refresh_token, "r");
    assert.equal(parseBody(loginResponseSchema, { user_id: "@l:x", device_id: "D" }).ok, false);
    assert.equal(parseBody(loginResponseSchema, { user_id: "@l:x", device_id: "D", access_token: "t", expires_in_ms: "soon" }).ok, false);
  });

  test("refresh response keeps a missing refresh token as null", () => {
    const parsed = parseBody(refreshResponseSchema, { access_token: "t2" });
    assert.ok(parsed.ok);
    assert.equal(parsed.value.refresh_token, null);
    assert.equal(parseBody(refreshResponseSchema, { refresh_token: "r" }).ok, false);
  });

  test("login flows must be a list of typed flows", () => {
    assert.ok(parseBody(loginFlowsSchema, { flows: [{ type: "m.login.password", extra: true }] }).ok);
    assert.equal(parseBody(loginFlowsSchema, { flows: "m.login.password" }).ok, false);
  });

  test("whoami needs a user id; device id may be absent", () => {
    const parsed = normalizeWhoami({ user_id: "@l:x" });
    assert.ok(parsed.ok);
    assert.deepEqual(parsed.value, { userId: "@l:x", deviceId: null });
    assert.equal(normalizeWhoami({ device_id: "D" }).ok, false);
  });

  test("error bodies tolerate odd fields", () => {
    assert.deepEqual(readErrorBody({ errcode: "M_LIMIT_EXCEEDED", retry_after_ms: 20, soft_logout: true }),
      { errcode: "M_LIMIT_EXCEEDED", retryAfterMs: 20, softLogout: true, uiaSession: null });
    assert.deepEqual(readErrorBody({ errcode: 5, retry_after_ms: "x", session: 7 }), { errcode: null, retryAfterMs: null, softLogout: false, uiaSession: null });
    assert.deepEqual(readErrorBody("<html>"), { errcode: null, retryAfterMs: null, softLogout: false, uiaSession: null });
    // LISA-XSIGN-02: a user-interactive-auth 401 keeps its session id for the one repeat with `auth`.
    assert.deepEqual(readErrorBody({ session: "sess1", flows: [{ stages: ["m.login.password"] }] }),
      { errcode: null, retryAfterMs: null, softLogout: false, uiaSession: "sess1" });
  });
});

describe("history responses", () => {
  test("context returns the anchor, events before (as given), state and start", () => {
    const { drops, onDrop } = collectDrops();
    const result = normalizeContext({
      event: ev("$anchor", { room_id: ROOM }), events_before: [ev("$b2"), { bad: true }, ev("$b1")],
      events_after: [ev("$after")], start: "t0", end: "t9", state: [ev("$m", { type: "m.room.member", state_key: "@alice:localhost" })],
    }, ROOM, "$anchor", onDrop);
    assert.ok(result.ok);
    assert.equal(result.value.event.event_id, "$anchor");
    assert.deepEqual(result.value.eventsBefore.map((e) => e.event_id), ["$b2", "$b1"]);
    assert.deepEqual(result.value.state.map((e) => e.state_key), ["@alice:localhost"]);
    assert.equal(result.value.start, "t0");
    assert.deepEqual(drops, ["matrix_event_malformed"]);
  });

  test("context without an anchor event, or with another room's anchor, is refused", () => {
    const missing = normalizeContext({ events_before: [] }, ROOM, "$anchor", () => undefined);
    assert.equal(!missing.ok && missing.error.code, "matrix_bad_response");
    const other = normalizeContext({ event: ev("$anchor", { room_id: "!x:localhost" }) }, ROOM, "$anchor", () => undefined);
    assert.equal(!other.ok && other.error.code, "matrix_room_mismatch");
    const wrongId = normalizeContext({ event: ev("$other") }, ROOM, "$anchor", () => undefined);
    assert.equal(!wrongId.ok && wrongId.error.code, "matrix_bad_response");
  });

  test("event must be the requested event of the requested room", () => {
    assert.ok(normalizeEvent(ev("$e", { room_id: ROOM }), ROOM, "$e").ok);
    assert.ok(normalizeEvent(ev("$e"), ROOM, "$e").ok);
    const other = normalizeEvent(ev("$e", { room_id: "!x:localhost" }), ROOM, "$e");
    assert.equal(!other.ok && other.error.code, "matrix_room_mismatch");
    const malformed = normalizeEvent({ event_id: "$e" }, ROOM, "$e");
    assert.equal(!malformed.ok && malformed.error.code, "matrix_bad_response");
  });

  test("messages: end is the next token; absent end, empty chunk or an unmoved token end paging", () => {
    const page = normalizeMessages({ chunk: [ev("$2"), ev("$1")], start: "t5", end: "t3" }, ROOM, "t5", () => undefined);
    assert.ok(page.ok);
    assert.deepEqual(page.value.events.map((e) => e.event_id), ["$2", "$1"]);
    assert.equal(page.value.next, "t3");
    const noEnd = normalizeMessages({ chunk: [ev("$1")], start: "t5" }, ROOM, "t5", () => undefined);
    assert.equal(noEnd.ok && noEnd.value.next, null);
    const empty = normalizeMessages({ chunk: [], start: "t5", end: "t4" }, ROOM, "t5", () => undefined);
    assert.equal(empty.ok && empty.value.next, null);
    const unmoved = normalizeMessages({ chunk: [ev("$1")], end: "t5" }, ROOM, "t5", () => undefined);
    assert.equal(unmoved.ok && unmoved.value.next, null);
    assert.equal(normalizeMessages({ start: "t5" }, ROOM, "t5", () => undefined).ok, false);
  });

  test("relations: next_batch is the next token; chunk is required", () => {
    const page = normalizeRelations({ chunk: [ev("$r")], next_batch: "n1", prev_batch: "p0" }, ROOM, null, () => undefined);
    assert.ok(page.ok);
    assert.equal(page.value.next, "n1");
    const last = normalizeRelations({ chunk: [ev("$r")] }, ROOM, "n1", () => undefined);
    assert.equal(last.ok && last.value.next, null);
    assert.equal(normalizeRelations({ next_batch: "n1" }, ROOM, null, () => undefined).ok, false);
  });

  test("send response needs a non-empty event id", () => {
    assert.ok(parseBody(sendResponseSchema, { event_id: "$sent" }).ok);
    assert.equal(parseBody(sendResponseSchema, { event_id: "" }).ok, false);
    assert.equal(parseBody(sendResponseSchema, {}).ok, false);
  });
});
