import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import {
  login,
  loginRaw,
  type MatrixTestClient,
  refreshTokens,
  registerUser,
  relatesTo,
  requestJson,
  resetPassword,
  startSynapse,
  SynapseHttpError,
  type SynapseServer,
  type TimelineEvent,
} from "../support/synapse.ts";

// Long enough for a few requests on a slow machine, short enough to watch it expire.
const ACCESS_TOKEN_LIFETIME_MS = 4_000;

function isMessage(event: TimelineEvent): boolean {
  return event.state_key === undefined;
}

function byId(events: readonly TimelineEvent[], eventId: string): TimelineEvent {
  const found = events.find((event) => event.event_id === eventId);
  assert.ok(found, `event ${eventId} is in the timeline`);
  return found;
}

// Synapse reports the time left on the token, so it can be a little under the configured lifetime.
function assertLifetime(expiresInMs: number | undefined): void {
  assert.ok(expiresInMs !== undefined && expiresInMs > 0 && expiresInMs <= ACCESS_TOKEN_LIFETIME_MS, `expires_in_ms ${expiresInMs}`);
}

async function rejectsWith(promise: Promise<unknown>, status: number, errcode: string): Promise<SynapseHttpError> {
  let caught: unknown;
  await assert.rejects(promise, (error: unknown) => {
    caught = error;
    return error instanceof SynapseHttpError && error.status === status && error.errcode === errcode;
  });
  return caught as SynapseHttpError;
}

describe("real Synapse homeserver harness", () => {
  let server: SynapseServer;
  let admin: MatrixTestClient;
  let alice: MatrixTestClient;
  let bob: MatrixTestClient;
  let lisa: MatrixTestClient;
  let roomId: string;

  before(async () => {
    server = await startSynapse({ accessTokenLifetimeMs: ACCESS_TOKEN_LIFETIME_MS });
    const users = [
      { localpart: "admin", password: "admin-password", admin: true },
      { localpart: "lisa", password: "lisa-password", displayName: "Lisa" },
      { localpart: "alice", password: "alice-password", displayName: "Alice" },
      { localpart: "bob", password: "bob-password", displayName: "Bob" },
    ];
    for (const user of users) await registerUser(server, user);
    admin = await login(server, "admin", "admin-password", "ADMINDEV");
    lisa = await login(server, "lisa", "lisa-password", "LISADEV");
    alice = await login(server, "alice", "alice-password");
    bob = await login(server, "@bob:localhost", "bob-password");
    roomId = await alice.createRoom({ name: "harness", invite: [bob.userId, lisa.userId] });
    await bob.join(roomId);
    await lisa.join(roomId);
  });

  after(async () => {
    await server?.stop();
  });

  test("serves the pinned Synapse on a loopback address", async () => {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(server.serverName, "localhost");
    const version = await admin.request("GET", "/_synapse/admin/v1/server_version");
    assert.equal(version["server_version"], server.version);
  });

  test("registers users through the shared-secret admin API and logs them in with chosen devices", async () => {
    assert.equal(await lisa.whoami(), "@lisa:localhost");
    assert.equal(lisa.deviceId, "LISADEV");
    assert.equal(await bob.whoami(), "@bob:localhost");
    const adminInfo = await admin.request("GET", `/_synapse/admin/v2/users/${encodeURIComponent(alice.userId)}`);
    assert.equal(adminInfo["admin"], false);
    assert.equal(adminInfo["displayname"], "Alice");
  });

  test("humans send every kind of message and the timeline reads back in order with its relations", async () => {
    const hello = await alice.sendText(roomId, "hello everyone");
    const bold = await bob.sendHtml(roomId, "**bold** words", "<strong>bold</strong> words");
    const mention = await alice.sendMention(roomId, lisa.userId, "Lisa", "what time is it?");
    const alias = await bob.sendText(roomId, "Lisa, tell us a joke");
    const boldEvent = await alice.getEvent(roomId, bold);
    const reply = await alice.sendReply(roomId, boldEvent, "I agree");
    const thread = await bob.sendThreadMessage(roomId, hello, "a thought in a thread");
    const edit = await alice.sendEdit(roomId, hello, "hello everyone!");
    const reaction = await bob.react(roomId, hello, "👍");
    const oops = await alice.sendText(roomId, "oops, wrong room");
    const redaction = await alice.redact(roomId, oops, "mistake");
    const notice = await lisa.sendNotice(roomId, "Indeed, I am here.");
    const sent = [hello, bold, mention, alias, reply, thread, edit, reaction, oops, redaction, notice];

    const timeline = await bob.timeline(roomId);
    assert.equal(timeline[0]?.type, "m.room.create", "paging reached the start of the room");
    assert.deepEqual(timeline.filter(isMessage).map((event) => event.event_id), sent);

    assert.equal(byId(timeline, bold).content["format"], "org.matrix.custom.html");
    assert.deepEqual(byId(timeline, mention).content["m.mentions"], { user_ids: [lisa.userId] });
    assert.match(String(byId(timeline, mention).content["formatted_body"]), /<a href="https:\/\/matrix\.to\/#\/@lisa:localhost">Lisa<\/a>: what time is it\?/);
    assert.equal(byId(timeline, alias).content["m.mentions"], undefined);

    const replyEvent = byId(timeline, reply);
    assert.deepEqual(relatesTo(replyEvent), { "m.in_reply_to": { event_id: bold } });
    assert.match(String(replyEvent.content["body"]), /^> <@bob:localhost> \*\*bold\*\* words\n\nI agree$/);
    assert.match(String(replyEvent.content["formatted_body"]), /^<mx-reply><blockquote>.*<strong>bold<\/strong> words<\/blockquote><\/mx-reply>I agree$/);

    assert.deepEqual(relatesTo(byId(timeline, thread)), {
      rel_type: "m.thread",
      event_id: hello,
      is_falling_back: true,
      "m.in_reply_to": { event_id: hello },
    });
    const editEvent = byId(timeline, edit);
    assert.deepEqual(relatesTo(editEvent), { rel_type: "m.replace", event_id: hello });
    assert.equal(editEvent.content["body"], "* hello everyone!");
    assert.deepEqual(editEvent.content["m.new_content"], { msgtype: "m.text", body: "hello everyone!" });
    assert.deepEqual(relatesTo(byId(timeline, reaction)), { rel_type: "m.annotation", event_id: hello, key: "👍" });

    assert.deepEqual(byId(timeline, oops).content, {}, "the redacted message lost its content");
    const redactionEvent = byId(timeline, redaction);
    assert.equal(redactionEvent.redacts ?? redactionEvent.content["redacts"], oops);
    assert.equal(byId(timeline, notice).content["msgtype"], "m.notice");

    const fromBob = await alice.eventsBy(roomId, bob.userId);
    assert.deepEqual(fromBob.filter(isMessage).map((event) => event.event_id), [bold, alias, thread, reaction]);
  });

  test("waitForEvents returns matches once they arrive and fails at its deadline otherwise", async () => {
    const pending = alice.waitForEvents(roomId, (event) => event.content["body"] === "late arrival", { timeoutMs: 20_000 });
    const late = await bob.sendText(roomId, "late arrival");
    const [found] = await pending;
    assert.equal(found?.event_id, late);
    // One read with the whole budget (the next poll would not fit before the deadline): with a
    // shorter interval the last poll could start with milliseconds left, and a read slower than
    // that on a loaded machine fails with the HTTP timeout instead of the deadline message.
    await assert.rejects(
      alice.waitForEvents(roomId, (event) => event.type === "never.sent", { timeoutMs: 5_000, intervalMs: 10_000 }),
      /waited 5000 ms for 1 matching event/,
    );
  });

  test("an admin password reset makes the old password fail, keeping or ending sessions as asked", async () => {
    await registerUser(server, { localpart: "carol", password: "old-password" });
    const carol = await login(server, "carol", "old-password");
    await resetPassword(admin, carol.userId, "new-password", { logoutDevices: false });
    await rejectsWith(loginRaw(server, "carol", "old-password"), 403, "M_FORBIDDEN");
    assert.equal(await carol.whoami(), carol.userId, "logout_devices: false keeps the session");

    const again = await login(server, "carol", "new-password", "CAROL2");
    await resetPassword(admin, carol.userId, "newer-password", { logoutDevices: true });
    await rejectsWith(again.whoami(), 401, "M_UNKNOWN_TOKEN");
    await rejectsWith(loginRaw(server, "carol", "new-password"), 403, "M_FORBIDDEN");
    assert.equal(await (await login(server, "carol", "newer-password")).whoami(), carol.userId);
  });

  test("a refresh-token login gets an expiring access token that /refresh renews", async () => {
    const client = await login(server, "lisa", "lisa-password", { deviceId: "LISAREFRESH", refreshToken: true });
    assert.equal(typeof client.refreshToken, "string");
    assertLifetime(client.expiresInMs);
    const plain = await login(server, "lisa", "lisa-password", "LISAPLAIN");
    assert.equal(plain.refreshToken, undefined, "no refresh token unless the client asks");
    assert.equal(plain.expiresInMs, undefined);

    // Poll (bounded) until the short-lived token is refused, then renew it.
    const deadline = Date.now() + ACCESS_TOKEN_LIFETIME_MS + 20_000;
    let refusal: SynapseHttpError | undefined;
    while (refusal === undefined && Date.now() < deadline) {
      try {
        await client.whoami();
        await new Promise((resolve) => setTimeout(resolve, 250));
      } catch (error) {
        if (!(error instanceof SynapseHttpError)) throw error;
        refusal = error;
      }
    }
    assert.ok(refusal, "the access token expired");
    assert.equal(refusal.status, 401);
    assert.equal(refusal.errcode, "M_UNKNOWN_TOKEN");
    assert.equal((refusal.body as Record<string, unknown>)["soft_logout"], true);

    const renewed = await refreshTokens(server, client.refreshToken ?? "");
    assert.equal(typeof renewed.refreshToken, "string");
    assertLifetime(renewed.expiresInMs);
    client.accessToken = renewed.accessToken;
    assert.equal(await client.whoami(), lisa.userId);
  });
});

describe("Synapse process lifecycle", () => {
  test("stop() ends the homeserver and removes its data folder", async () => {
    const server = await startSynapse();
    const dataDir = server.dataDir;
    assert.ok(existsSync(dataDir));
    await requestJson(server.url, "GET", "/_matrix/client/versions");
    await server.stop();
    await server.stop();
    assert.equal(existsSync(dataDir), false);
    await assert.rejects(requestJson(server.url, "GET", "/_matrix/client/versions", { timeoutMs: 2_000 }));
  });
});
