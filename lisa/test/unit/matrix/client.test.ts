import assert from "node:assert/strict";
import { describe, test, type TestContext } from "node:test";
import type { MatrixClientOptions } from "../../../src/matrix/client.ts";
import { authReply, authScript, ev, makeClient, type Recorded, type Reply, ROOM, startServer, tokenOf, USER, v3 } from "./harness.ts";

/** Logs in normally and answers every other request with `reply` (or an empty object). */
async function setup(t: TestContext, reply: (request: Recorded) => Reply | null, options: Partial<MatrixClientOptions> = {}) {
  const auth = authScript(false);
  const server = await startServer((request) => authReply(auth, request) ?? reply(request) ?? { json: {} });
  const made = makeClient(server.url, options);
  t.after(async () => {
    await made.client.close();
    await server.close();
  });
  assert.ok((await made.client.login(new AbortController().signal)).ok);
  return { server, ...made };
}

const signal = (): AbortSignal => new AbortController().signal;
const syncBody = { next_batch: "s2", rooms: { join: { [ROOM]: { timeline: { events: [ev("$1")], limited: false, prev_batch: "p1" } } } } };

describe("sync", () => {
  test("sends since, timeout, an inline filter and full_state off; the token only in the header", async (t) => {
    const { client, server } = await setup(t, (r) => (r.pathname === v3("/sync") ? { json: syncBody } : null));
    const result = await client.sync({ since: "s1", timeoutMs: 25_000, roomIds: [ROOM, "!b:localhost"], timelineLimit: 50, signal: signal() });
    assert.ok(result.ok);
    assert.equal(result.value.nextBatch, "s2");
    const sent = server.hits("/sync")[0];
    assert.equal(sent?.query.get("since"), "s1");
    assert.equal(sent?.query.get("timeout"), "25000");
    assert.equal(sent?.query.get("full_state"), "false");
    assert.deepEqual(JSON.parse(sent?.query.get("filter") ?? "null"), {
      presence: { types: [] },
      account_data: { types: [] },
      room: {
        rooms: [ROOM, "!b:localhost"], timeline: { limit: 50, lazy_load_members: true }, state: { lazy_load_members: true },
        ephemeral: { types: [] }, account_data: { types: [] },
      },
    });
    for (const request of server.requests) {
      assert.equal(request.url.includes("token-"), false);
      assert.equal(request.url.includes("access_token"), false);
    }
    assert.equal(tokenOf(sent ?? server.requests[0]!), "token-1");
  });

  test("an initial sync sends no since", async (t) => {
    const { client, server } = await setup(t, (r) => (r.pathname === v3("/sync") ? { json: syncBody } : null));
    assert.ok((await client.sync({ since: null, timeoutMs: 0, roomIds: [ROOM], timelineLimit: 5, signal: signal() })).ok);
    assert.equal(server.hits("/sync")[0]?.query.has("since"), false);
  });

  test("a response without next_batch is matrix_bad_response", async (t) => {
    const { client } = await setup(t, (r) => (r.pathname === v3("/sync") ? { json: { rooms: {} } } : null));
    const result = await client.sync({ since: "s1", timeoutMs: 0, roomIds: [ROOM], timelineLimit: 5, signal: signal() });
    assert.equal(!result.ok && result.error.code, "matrix_bad_response");
  });

  test("malformed events are dropped one by one and logged at debug with a code and hashed room", async (t) => {
    const body = { next_batch: "s2", rooms: { join: { [ROOM]: { timeline: { events: [ev("$1"), { event_id: "$bad" }, ev("$2")] } } } } };
    const { client, lines } = await setup(t, (r) => (r.pathname === v3("/sync") ? { json: body } : null));
    const result = await client.sync({ since: "s1", timeoutMs: 0, roomIds: [ROOM], timelineLimit: 5, signal: signal() });
    assert.ok(result.ok);
    assert.deepEqual(result.value.rooms[0]?.events.map((e) => e.event_id), ["$1", "$2"]);
    const dropped = lines.filter((line) => line.includes("matrix_event_dropped"));
    assert.equal(dropped.length, 1);
    assert.match(dropped[0] ?? "", /"level":"debug".*"code":"matrix_event_malformed".*"room_id_hash":"room_[0-9a-f]{12}"/);
    assert.equal(lines.some((line) => line.includes(ROOM)), false);
  });

  test("a long-poll that never answers ends at its deadline as a retryable matrix_network", async (t) => {
    // The deadline must also let setup's login (three requests) through on a loaded machine: 20 ms did not (failed 4 of 4 runs
    // beside builds); the long-poll's deadline is max(requestTimeoutMs, timeout + margin), so this one hangs for 2 s.
    const { client } = await setup(t, (r) => (r.pathname === v3("/sync") ? { hang: true } : null),
      { requestTimeoutMs: 2_000, syncTimeoutMarginMs: 0, retry: { maxRetries: 0 } });
    const result = await client.sync({ since: "s1", timeoutMs: 10, roomIds: [ROOM], timelineLimit: 5, signal: signal() });
    assert.equal(!result.ok && result.error.code, "matrix_network");
    assert.equal(!result.ok && result.error.retryable, true);
  });

  test("close aborts an in-flight long-poll", async (t) => {
    const { client, server } = await setup(t, (r) => (r.pathname === v3("/sync") ? { hang: true } : null));
    const pending = client.sync({ since: "s1", timeoutMs: 30_000, roomIds: [ROOM], timelineLimit: 5, signal: signal() });
    while (server.hits("/sync").length === 0) await new Promise((resolve) => setImmediate(resolve));
    await client.close();
    const result = await pending;
    assert.equal(!result.ok && result.error.code, "matrix_aborted");
  });
});

describe("history", () => {
  test("messagesBackwards pages with dir=b, from and limit in an encoded room path", async (t) => {
    const { client, server } = await setup(t, (r) =>
      r.pathname.endsWith("/messages") ? { json: { chunk: [ev("$3"), ev("$2")], start: "t9", end: "t7" } } : null);
    const result = await client.messagesBackwards(ROOM, "t9", 20, signal());
    assert.deepEqual(result.ok && { ids: result.value.events.map((e) => e.event_id), next: result.value.next }, { ids: ["$3", "$2"], next: "t7" });
    const sent = server.hits("/messages")[0];
    assert.equal(sent?.url.startsWith(`${v3("/rooms/")}${encodeURIComponent(ROOM)}/messages?`), true);
    assert.deepEqual(Object.fromEntries(sent?.query ?? []), { dir: "b", from: "t9", limit: "20" });
  });

  test("context asks for twice the wanted events (capped at 100) and returns events before newest-first", async (t) => {
    const { client, server } = await setup(t, (r) => r.pathname.includes("/context/")
      ? { json: { event: ev("$anchor", { room_id: ROOM }), events_before: [ev("$b2"), ev("$b1")], events_after: [], start: "st", state: [] } }
      : null);
    const result = await client.context(ROOM, "$anchor", 30, signal());
    assert.ok(result.ok);
    assert.deepEqual(result.value.eventsBefore.map((e) => e.event_id), ["$b2", "$b1"]);
    assert.equal(result.value.start, "st");
    await client.context(ROOM, "$anchor", 80, signal());
    const sent = server.requests.filter((r) => r.pathname.includes("/context/"));
    assert.deepEqual(sent.map((r) => r.query.get("limit")), ["60", "100"]);
    assert.equal(sent[0]?.pathname, `${v3("/rooms/")}${encodeURIComponent(ROOM)}/context/%24anchor`);
  });

  test("context and event refuse an event from another room", async (t) => {
    const { client } = await setup(t, (r) => r.pathname.includes("/context/")
      ? { json: { event: ev("$anchor", { room_id: "!evil:localhost" }) } }
      : r.pathname.includes("/event/") ? { json: ev("$target", { room_id: "!evil:localhost" }) } : null);
    const context = await client.context(ROOM, "$anchor", 10, signal());
    assert.equal(!context.ok && context.error.code, "matrix_room_mismatch");
    const event = await client.event(ROOM, "$target", signal());
    assert.equal(!event.ok && event.error.code, "matrix_room_mismatch");
  });

  test("event fetches one event by encoded room and event id", async (t) => {
    const { client, server } = await setup(t, (r) => (r.pathname.includes("/event/") ? { json: ev("$a/b+c", { room_id: ROOM }) } : null));
    const result = await client.event(ROOM, "$a/b+c", signal());
    assert.equal(result.ok && result.value.event_id, "$a/b+c");
    assert.equal(server.requests.at(-1)?.pathname, `${v3("/rooms/")}${encodeURIComponent(ROOM)}/event/%24a%2Fb%2Bc`);
  });

  test("a missing event is matrix_not_found", async (t) => {
    const { client } = await setup(t, (r) => (r.pathname.includes("/event/") ? { status: 404, json: { errcode: "M_NOT_FOUND" } } : null));
    const result = await client.event(ROOM, "$gone", signal());
    assert.equal(!result.ok && result.error.code, "matrix_not_found");
  });

  test("threadBackwards uses the v1 relations endpoint with dir=b, limit and from", async (t) => {
    const { client, server } = await setup(t, (r) => r.pathname.includes("/relations/")
      ? { json: { chunk: [ev("$t2")], next_batch: r.query.has("from") ? undefined : "n1" } }
      : null);
    const first = await client.threadBackwards(ROOM, "$root", null, 10, signal());
    assert.equal(first.ok && first.value.next, "n1");
    const second = await client.threadBackwards(ROOM, "$root", "n1", 10, signal());
    assert.equal(second.ok && second.value.next, null);
    const sent = server.requests.filter((r) => r.pathname.includes("/relations/"));
    assert.equal(sent[0]?.pathname, `/_matrix/client/v1/rooms/${encodeURIComponent(ROOM)}/relations/%24root/m.thread`);
    assert.deepEqual(sent.map((r) => Object.fromEntries(r.query)), [{ dir: "b", limit: "10" }, { dir: "b", limit: "10", from: "n1" }]);
  });
});

describe("room writes", () => {
  test("sendMessage PUTs the content under the transaction id and returns the event id", async (t) => {
    const { client, server } = await setup(t, (r) => (r.pathname.includes("/send/") ? { json: { event_id: "$sent" } } : null));
    const content = { msgtype: "m.text", body: "hello", "m.mentions": { user_ids: ["@alice:localhost"] } };
    const result = await client.sendMessage(ROOM, "lisa.txn/1", content, signal());
    assert.deepEqual(result, { ok: true, value: "$sent" });
    const sent = server.requests.at(-1);
    assert.equal(sent?.method, "PUT");
    assert.equal(sent?.pathname, `${v3("/rooms/")}${encodeURIComponent(ROOM)}/send/m.room.message/lisa.txn%2F1`);
    assert.deepEqual(sent?.body, content);
  });

  test("exactly once across token scopes: a token renewed by another request while a send is in flight stops its retries", async (t) => {
    const auth = authScript(false);
    let releaseSend: () => void = () => {};
    const sendHeld = new Promise<void>((resolve) => { releaseSend = resolve; });
    let sendArrived: () => void = () => {};
    const arrived = new Promise<void>((resolve) => { sendArrived = resolve; });
    const server = await startServer(async (request) => {
      const reply = authReply(auth, request);
      if (reply !== null) return reply;
      if (!request.pathname.includes("/send/")) return { json: {} };
      sendArrived();
      await sendHeld;
      return { status: 502, json: { errcode: "M_UNKNOWN", error: "bad gateway" } };
    });
    const { client } = makeClient(server.url);
    t.after(async () => {
      await client.close();
      await server.close();
    });
    assert.ok((await client.login(signal())).ok);
    const sending = client.sendMessage(ROOM, "t1", { body: "x" }, signal());
    await arrived;
    auth.valid.delete("token-1");
    assert.ok((await client.whoami(signal())).ok, "whoami renews the session to token-2");
    releaseSend();
    const result = await sending;
    assert.equal(result.ok, false);
    assert.equal(server.requests.filter((r) => r.pathname.includes("/send/")).length, 1, "the send is not repeated under the renewed token");
  });

  test("a send response without an event id is matrix_bad_response", async (t) => {
    const { client } = await setup(t, (r) => (r.pathname.includes("/send/") ? { json: {} } : null));
    const result = await client.sendMessage(ROOM, "t1", { body: "x" }, signal());
    assert.equal(!result.ok && result.error.code, "matrix_bad_response");
  });

  test("setTyping sends typing with a timeout clamped to 15-45 s, and a bare stop", async (t) => {
    const { client, server } = await setup(t, () => null);
    for (const [typing, timeout] of [[true, 30_000], [true, 1_000], [true, 600_000], [false, 30_000]] as const) {
      assert.ok((await client.setTyping(ROOM, typing, timeout, signal())).ok);
    }
    const sent = server.requests.filter((r) => r.pathname.includes("/typing/"));
    assert.equal(sent[0]?.pathname, `${v3("/rooms/")}${encodeURIComponent(ROOM)}/typing/${encodeURIComponent(USER)}`);
    assert.deepEqual(sent.map((r) => r.body), [
      { typing: true, timeout: 30_000 }, { typing: true, timeout: 15_000 }, { typing: true, timeout: 45_000 }, { typing: false },
    ]);
    assert.ok(sent.every((r) => r.method === "PUT"));
  });

  test("whoami reports the session's identity", async (t) => {
    const { client } = await setup(t, () => null);
    const result = await client.whoami(signal());
    assert.equal(result.ok && result.value.userId, USER);
  });
});
