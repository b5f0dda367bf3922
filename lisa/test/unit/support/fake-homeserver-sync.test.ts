import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { FakeHomeserver, HomeserverProfile } from "../../support/fake-homeserver.ts";
import { traitsOf } from "../../support/fake-homeserver/traits.ts";
import { V3, call, login, seg, sync, loggedInServer } from "../../support/fake-homeserver/test-client.ts";

const LISA = "@lisa:localhost";
const ALICE = "@alice:localhost";
const BOB = "@bob:localhost";

const limitFilter = (limit: number, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ room: { timeline: { limit }, ...extra } });


function bodies(events: readonly { content: { body?: unknown } }[]): unknown[] {
  return events.map((e) => e.content.body);
}

for (const profile of ["synapse", "continuwuity", "dendrite"] as const satisfies readonly HomeserverProfile[]) {
  describe(`fake homeserver sync (${profile})`, () => {
    const ctx = loggedInServer(profile, LISA);

    test("initial sync returns only joined rooms with the newest events, limited with prev_batch when truncated", async () => {
      const { hs, token } = ctx;
      hs.createRoom("!init:localhost", [ALICE, LISA]);
      hs.createRoom("!other:localhost", [BOB]);
      for (let i = 1; i <= 5; i += 1) hs.sendText("!init:localhost", ALICE, `m${i}`);
      const res = await sync(hs, token, { filter: limitFilter(3), timeout: 0 });
      assert.equal(res.status, 200);
      assert.equal(typeof res.body.next_batch, "string");
      assert.equal(res.body.rooms.join["!other:localhost"], undefined);
      const room = res.body.rooms.join["!init:localhost"];
      assert.deepEqual(bodies(room.timeline.events), ["m3", "m4", "m5"]);
      assert.equal(room.timeline.limited, true);
      assert.equal(typeof room.timeline.prev_batch, "string");
      assert.ok(room.timeline.events.every((e: Record<string, unknown>) => !("room_id" in e)));
      const members = room.state.events.filter((e: { type: string }) => e.type === "m.room.member");
      assert.ok(members.some((e: { state_key: string; content: { displayname: string } }) => e.state_key === ALICE && e.content.displayname === "alice"));
    });

    test("incremental sync returns only events after since and omits rooms without news", async () => {
      const { hs, token } = ctx;
      hs.createRoom("!inc:localhost", [ALICE, LISA]);
      hs.createRoom("!quiet:localhost", [ALICE, LISA]);
      const first = await sync(hs, token, { timeout: 0 });
      hs.sendText("!inc:localhost", ALICE, "after");
      const next = await sync(hs, token, { since: first.body.next_batch, timeout: 0 });
      const rooms = next.body.rooms.join;
      assert.deepEqual(Object.keys(rooms), ["!inc:localhost"]);
      assert.deepEqual(bodies(rooms["!inc:localhost"].timeline.events), ["after"]);
      // Continuwuity leaves `limited` out when it is false.
      assert.equal(rooms["!inc:localhost"].timeline.limited, traitsOf(profile).omitsLimitedWhenFalse ? undefined : false);
      assert.deepEqual(rooms["!inc:localhost"].state.events, []);
      const empty = await sync(hs, token, { since: next.body.next_batch, timeout: 0 });
      assert.equal(empty.body.rooms, undefined);
      assert.equal(empty.body.next_batch, next.body.next_batch);
    });

    test("a long-poll wakes up when a new event arrives for the user", async () => {
      const { hs, token } = ctx;
      hs.createRoom("!poll:localhost", [ALICE, LISA]);
      const first = await sync(hs, token, { timeout: 0 });
      const pending = sync(hs, token, { since: first.body.next_batch, timeout: 25_000 });
      await hs.waitFor((s) => s.activeSyncs === 1);
      hs.sendText("!poll:localhost", ALICE, "wake up");
      const res = await pending;
      assert.deepEqual(bodies(res.body.rooms.join["!poll:localhost"].timeline.events), ["wake up"]);
    });

    test("a long-poll ignores events in rooms the user is not in", async () => {
      const { hs, token } = ctx;
      hs.createRoom("!mine:localhost", [ALICE, LISA]);
      hs.createRoom("!notmine:localhost", [BOB]);
      const first = await sync(hs, token, { timeout: 0 });
      const pending = sync(hs, token, { since: first.body.next_batch, timeout: 25_000 });
      await hs.waitFor((s) => s.activeSyncs === 1);
      hs.sendText("!notmine:localhost", BOB, "not for lisa");
      hs.sendText("!mine:localhost", ALICE, "for lisa");
      const res = await pending;
      assert.deepEqual(Object.keys(res.body.rooms.join), ["!mine:localhost"]);
    });

    test("a long-poll that sees nothing returns an empty response with the same position", async () => {
      const { hs, token } = ctx;
      const first = await sync(hs, token, { timeout: 0 });
      const res = await sync(hs, token, { since: first.body.next_batch, timeout: 20 });
      assert.equal(res.status, 200);
      assert.equal(res.body.rooms, undefined);
      assert.equal(res.body.next_batch, first.body.next_batch);
    });

    test("a limited incremental timeline plus /messages paging from prev_batch recovers every event in order", async () => {
      const { hs, token } = ctx;
      const roomId = "!gap:localhost";
      hs.createRoom(roomId, [ALICE, LISA]);
      hs.sendText(roomId, ALICE, "before");
      const first = await sync(hs, token, { filter: limitFilter(5), timeout: 0 });
      const sent = Array.from({ length: 23 }, (_, i) => `gap${i}`);
      for (const body of sent) hs.sendText(roomId, ALICE, body);
      const next = await sync(hs, token, { since: first.body.next_batch, filter: limitFilter(5), timeout: 0 });
      const timeline = next.body.rooms.join[roomId].timeline;
      assert.equal(timeline.limited, true);
      assert.deepEqual(bodies(timeline.events), sent.slice(-5));
      const recovered: unknown[] = [];
      let from: string | undefined = timeline.prev_batch;
      let pages = 0;
      while (from !== undefined && !recovered.includes("before")) {
        const page = await call(hs, "GET", `${V3}/rooms/${seg(roomId)}/messages`, { token, query: { dir: "b", from, limit: 4 } });
        assert.equal(page.status, 200);
        assert.equal(page.body.start, from);
        recovered.unshift(...bodies(page.body.chunk).reverse());
        from = page.body.end;
        pages += 1;
      }
      assert.ok(pages > 1);
      const all = [...recovered.filter((b) => b !== undefined), ...bodies(timeline.events)];
      assert.deepEqual(all.slice(all.indexOf("before")), ["before", ...sent]);
    });

    test("/messages paging backwards ends with an empty chunk and no end token", async () => {
      const { hs, token } = ctx;
      const roomId = "!short:localhost";
      hs.createRoom(roomId, [ALICE, LISA]);
      const res = await call(hs, "GET", `${V3}/rooms/${seg(roomId)}/messages`, { token, query: { dir: "b", limit: 100 } });
      assert.equal(res.body.chunk.length, 6);
      assert.equal(res.body.chunk.at(-1).type, "m.room.create");
      const end = await call(hs, "GET", `${V3}/rooms/${seg(roomId)}/messages`, { token, query: { dir: "b", from: res.body.end } });
      assert.deepEqual(end.body.chunk, []);
      assert.equal(end.body.end, undefined);
    });

    test("/messages accepts a sync next_batch as from, with each server's boundary", async () => {
      const { hs, token } = ctx;
      const roomId = "!fromsync:localhost";
      hs.createRoom(roomId, [ALICE, LISA]);
      hs.sendText(roomId, ALICE, "older");
      hs.sendText(roomId, ALICE, "newest");
      const res = await sync(hs, token, { timeout: 0 });
      const page = await call(hs, "GET", `${V3}/rooms/${seg(roomId)}/messages`, { token, query: { dir: "b", from: res.body.next_batch, limit: 1 } });
      // Synapse's s-token means "after N"; Continuwuity's count is exclusive, so its newest event is skipped.
      assert.deepEqual(bodies(page.body.chunk), profile !== "continuwuity" ? ["newest"] : ["older"]);
    });

    test("the sender's own event carries unsigned.transaction_id only for the sending device", async () => {
      const { hs, token } = ctx;
      const roomId = "!own:localhost";
      hs.createRoom(roomId, [ALICE, LISA]);
      const first = await sync(hs, token, { timeout: 0 });
      const sent = await call(hs, "PUT", `${V3}/rooms/${seg(roomId)}/send/m.room.message/txn-own-1`, { token, body: { msgtype: "m.text", body: "hi" } });
      assert.equal(sent.status, 200);
      const next = await sync(hs, token, { since: first.body.next_batch, timeout: 0 });
      const own = next.body.rooms.join[roomId].timeline.events[0];
      assert.equal(own.event_id, sent.body.event_id);
      assert.equal(own.unsigned.transaction_id, "txn-own-1");
      const otherDevice = (await login(hs, LISA, "pw", { device_id: "OTHERDEV" })).access_token;
      const seen = await sync(hs, otherDevice, { since: first.body.next_batch, timeout: 0 });
      assert.equal(seen.body.rooms.join[roomId].timeline.events[0].unsigned?.transaction_id, undefined);
    });

    test("a leave shows up under rooms.leave and the room leaves rooms.join", async () => {
      const { hs } = ctx;
      hs.addUser("@leaver:localhost", "pw");
      const leaverToken = (await login(hs, "leaver", "pw")).access_token;
      hs.createRoom("!leave:localhost", [ALICE, "@leaver:localhost"]);
      const first = await sync(hs, leaverToken, { timeout: 0 });
      assert.ok(first.body.rooms.join["!leave:localhost"]);
      hs.leave("!leave:localhost", "@leaver:localhost");
      hs.sendText("!leave:localhost", ALICE, "after leaving");
      const next = await sync(hs, leaverToken, { since: first.body.next_batch, timeout: 0 });
      assert.equal(next.body.rooms.join, undefined);
      const left = next.body.rooms.leave["!leave:localhost"];
      assert.deepEqual(left.timeline.events.map((e: { content: { membership: string } }) => e.content.membership), ["leave"]);
    });

    test("a since beyond the server's position yields an empty response", async () => {
      const { hs, token } = ctx;
      const far = profile !== "continuwuity" ? "s999999_0_0_0_0_0_0_0_0_0" : "999999";
      const res = await sync(hs, token, { since: far, timeout: 0 });
      assert.equal(res.status, 200);
      assert.equal(res.body.rooms, undefined);
    });

    test("lazy loading keeps only the member events of timeline senders", async () => {
      const { hs, token } = ctx;
      hs.createRoom("!lazy:localhost", [ALICE, BOB, LISA]);
      hs.sendText("!lazy:localhost", BOB, "only bob speaks");
      const res = await sync(hs, token, { filter: limitFilter(1, { state: { lazy_load_members: true } }), timeout: 0 });
      const state = res.body.rooms.join["!lazy:localhost"].state.events;
      const members = state.filter((e: { type: string }) => e.type === "m.room.member").map((e: { state_key: string }) => e.state_key);
      assert.deepEqual(members, [BOB]);
    });

    test("a stored filter id works like the inline filter", async () => {
      const { hs, token } = ctx;
      hs.createRoom("!stored:localhost", [ALICE, LISA]);
      const created = await call(hs, "POST", `${V3}/user/${seg(LISA)}/filter`, { token, body: { room: { timeline: { limit: 1 } } } });
      assert.equal(created.status, 200);
      const res = await sync(hs, token, { filter: created.body.filter_id, timeout: 0 });
      assert.equal(res.body.rooms.join["!stored:localhost"].timeline.events.length, 1);
    });
  });
}

describe("fake homeserver sync: synapse specifics", () => {
  const ctx = loggedInServer("synapse", LISA);

  test("filter.room.rooms restricts the response to the listed rooms", async () => {
    const { hs, token } = ctx;
    hs.createRoom("!allowed:localhost", [ALICE, LISA]);
    hs.createRoom("!elsewhere:localhost", [ALICE, LISA]);
    const res = await sync(hs, token, { filter: limitFilter(5, { rooms: ["!allowed:localhost"] }), timeout: 0 });
    assert.deepEqual(Object.keys(res.body.rooms.join), ["!allowed:localhost"]);
  });

  test("a garbage since is 400 M_UNKNOWN (Invalid stream token)", async () => {
    const res = await sync(ctx.hs, ctx.token, { since: "garbage", timeout: 0 });
    assert.equal(res.status, 400);
    assert.equal(res.body.errcode, "M_UNKNOWN");
  });

  test("a missing timeout answers at once", async () => {
    const first = await sync(ctx.hs, ctx.token, { timeout: 0 });
    const res = await sync(ctx.hs, ctx.token, { since: first.body.next_batch });
    assert.equal(res.status, 200);
    assert.equal(res.body.rooms, undefined);
  });

  test("a short initial timeline is not limited and an empty one still has prev_batch", async () => {
    const { hs, token } = ctx;
    hs.createRoom("!few:localhost", [ALICE, LISA]);
    const res = await sync(hs, token, { filter: limitFilter(50, { rooms: ["!few:localhost"] }), timeout: 0 });
    assert.equal(res.body.rooms.join["!few:localhost"].timeline.limited, false);
    const empty = await sync(hs, token, { filter: limitFilter(0, { rooms: ["!few:localhost"] }), timeout: 0 });
    const timeline = empty.body.rooms.join["!few:localhost"].timeline;
    assert.deepEqual(timeline.events, []);
    assert.equal(typeof timeline.prev_batch, "string");
  });

  test("timeline type filters apply", async () => {
    const { hs, token } = ctx;
    hs.createRoom("!types:localhost", [ALICE, LISA]);
    hs.sendText("!types:localhost", ALICE, "text");
    const filter = JSON.stringify({ room: { rooms: ["!types:localhost"], timeline: { limit: 10, types: ["m.room.message"] } } });
    const res = await sync(hs, token, { filter, timeout: 0 });
    assert.deepEqual(res.body.rooms.join["!types:localhost"].timeline.events.map((e: { type: string }) => e.type), ["m.room.message"]);
  });
});

describe("fake homeserver sync: continuwuity quirks", () => {
  const ctx = loggedInServer("continuwuity", LISA);

  test("room filters are ignored: non-allowlisted joined rooms come back too", async () => {
    const { hs, token } = ctx;
    hs.createRoom("!c-allowed:localhost", [ALICE, LISA]);
    hs.createRoom("!c-elsewhere:localhost", [ALICE, LISA]);
    const filter = JSON.stringify({ room: { rooms: ["!c-allowed:localhost"], timeline: { limit: 5, types: ["m.room.message"] } } });
    const res = await sync(hs, token, { filter, timeout: 0 });
    assert.ok(res.body.rooms.join["!c-allowed:localhost"]);
    assert.ok(res.body.rooms.join["!c-elsewhere:localhost"]);
    assert.ok(res.body.rooms.join["!c-elsewhere:localhost"].timeline.events.some((e: { type: string }) => e.type !== "m.room.message"));
  });

  test("an unparsable since silently yields a full initial sync", async () => {
    const { hs, token } = ctx;
    hs.createRoom("!c-garbage:localhost", [ALICE, LISA]);
    const res = await sync(hs, token, { since: "s12_garbage", timeout: 0 });
    assert.equal(res.status, 200);
    assert.ok(res.body.rooms.join["!c-garbage:localhost"]);
  });

  test("the first sync after a join is limited even when everything fits", async () => {
    const { hs, token } = ctx;
    hs.createRoom("!c-join:localhost", [ALICE]);
    const first = await sync(hs, token, { timeout: 0 });
    hs.join("!c-join:localhost", LISA);
    const next = await sync(hs, token, { since: first.body.next_batch, filter: limitFilter(100), timeout: 0 });
    const timeline = next.body.rooms.join["!c-join:localhost"].timeline;
    assert.equal(timeline.limited, true);
    assert.ok(timeline.events.length < 100);
    const initial = await sync(hs, token, { filter: limitFilter(100), timeout: 0 });
    assert.equal(initial.body.rooms.join["!c-join:localhost"].timeline.limited, true);
  });

  test("prev_batch is absent when the timeline is empty", async () => {
    const { hs, token } = ctx;
    hs.createRoom("!c-empty:localhost", [ALICE, LISA]);
    const res = await sync(hs, token, { filter: limitFilter(0), timeout: 0 });
    const timeline = res.body.rooms.join["!c-empty:localhost"].timeline;
    assert.deepEqual(timeline.events, []);
    assert.equal("prev_batch" in timeline, false);
  });

  test("a missing timeout long-polls until an event arrives", async () => {
    const { hs, token } = ctx;
    hs.createRoom("!c-default:localhost", [ALICE, LISA]);
    const first = await sync(hs, token, { timeout: 0 });
    const pending = sync(hs, token, { since: first.body.next_batch });
    await hs.waitFor((s) => s.activeSyncs === 1);
    hs.sendText("!c-default:localhost", ALICE, "held");
    const res = await pending;
    assert.deepEqual(bodies(res.body.rooms.join["!c-default:localhost"].timeline.events), ["held"]);
  });

  test("sync tokens are plain stream counts, as Continuwuity's are", async () => {
    const res = await sync(ctx.hs, ctx.token, { timeout: 0 });
    assert.match(res.body.next_batch, /^\d+$/);
    assert.equal(Number(res.body.next_batch), ctx.hs.streamPosition);
  });
});
