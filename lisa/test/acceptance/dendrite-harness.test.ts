// The real-Dendrite harness (scripts/dendrite/install.sh, test/support/dendrite):
// SQLite, 127.0.0.1 only, shared-secret registration, rate limits out of
// reach, a clean stop; and the measured differences from Synapse that the fake
// homeserver's `dendrite` profile and docs/operations.md section 13 rely on.
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { type DendriteServer, startDendrite } from "../support/dendrite/server.ts";
import { login, type MatrixTestClient, registerUser, requestJson, SynapseHttpError } from "../support/synapse.ts";

const seg = encodeURIComponent;

async function rejectsWith(promise: Promise<unknown>, status: number, errcode: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => error instanceof SynapseHttpError && error.status === status && error.errcode === errcode);
}

describe("real Dendrite homeserver harness", () => {
  let server: DendriteServer;
  let alice: MatrixTestClient;
  let lisa: MatrixTestClient;
  let roomId: string;

  before(async () => {
    server = await startDendrite();
    await registerUser(server, { localpart: "alice", password: "alice-password", displayName: "Alice" });
    await registerUser(server, { localpart: "lisa", password: "lisa-password", displayName: "Lisa" });
    alice = await login(server, "alice", "alice-password", "ALICEDEV");
    lisa = await login(server, "lisa", "lisa-password", "LISADEV");
    roomId = await alice.createRoom({ invite: [lisa.userId] });
    await lisa.join(roomId);
  });

  after(async () => {
    await server?.stop();
  });

  test("it listens on 127.0.0.1 with SQLite files in its own folder, and registers users with the shared secret", async () => {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(server.version, "v0.13.8");
    assert.ok(readdirSync(server.dataDir).some((name) => name.startsWith("dendrite_") && name.endsWith(".db")), "SQLite databases");
    assert.equal(await alice.whoami(), "@alice:localhost");
  });

  test("rate limits are out of reach: fifty messages in a row are all accepted", async () => {
    const ids = await Promise.all(Array.from({ length: 50 }, (_, i) => alice.sendText(roomId, `burst ${i}`)));
    assert.equal(new Set(ids).size, 50);
  });

  test("measured: transaction ids are deduplicated per access token, not per device", async () => {
    const path = `/_matrix/client/v3/rooms/${seg(roomId)}/send/m.room.message/same-txn`;
    const first = await lisa.request("PUT", path, { body: { msgtype: "m.text", body: "once" } });
    const repeated = await lisa.request("PUT", path, { body: { msgtype: "m.text", body: "once" } });
    assert.equal(repeated["event_id"], first["event_id"], "the same token deduplicates");
    const relogged = await login(server, "lisa", "lisa-password", "LISADEV");
    const again = await relogged.request("PUT", path, { body: { msgtype: "m.text", body: "once" } });
    assert.notEqual(again["event_id"], first["event_id"], "a new login with the same device creates a second event");
    await rejectsWith(lisa.whoami(), 401, "M_UNKNOWN_TOKEN");
    lisa = relogged;
  });

  test("measured: no refresh tokens (/refresh is 404 M_UNRECOGNIZED) and a default room version of 10", async () => {
    await rejectsWith(requestJson(server.url, "POST", "/_matrix/client/v3/refresh", { body: { refresh_token: "x" } }), 404, "M_UNRECOGNIZED");
    const create = await alice.request("GET", `/_matrix/client/v3/rooms/${seg(roomId)}/state/m.room.create/`);
    assert.equal(create["room_version"], "10");
  });

  test("measured: the sync filter's room list is ignored, and plain messages carry no unsigned data", async () => {
    const other = await alice.createRoom({ invite: [lisa.userId] });
    await lisa.join(other);
    const filter = JSON.stringify({ room: { rooms: [roomId], timeline: { limit: 5 } } });
    // Dendrite's sync view follows the room server asynchronously: poll (bounded) until the join shows.
    let joined: string[] = [];
    for (const deadline = Date.now() + 15_000; Date.now() < deadline && !joined.includes(other);) {
      const sync = await lisa.request("GET", "/_matrix/client/v3/sync", { query: { filter, timeout: 0 } });
      joined = Object.keys(((sync["rooms"] as Record<string, unknown> | undefined)?.["join"] ?? {}) as Record<string, unknown>);
      if (!joined.includes(other)) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.ok(joined.includes(roomId) && joined.includes(other), "a room outside the filter's list arrives");
    const said = await alice.sendText(roomId, "no age here");
    // Dendrite may answer 404 for a moment after the send returned (the same bounded retry as the chaos driver).
    const event = await alice.getEventWhenReadable(roomId, said);
    assert.equal(event.unsigned, undefined);
  });

  test("stop() ends the process and removes its data folder", async () => {
    const second = await startDendrite();
    const dir = second.dataDir;
    assert.ok(existsSync(dir));
    await second.stop();
    assert.equal(existsSync(dir), false);
    await assert.rejects(fetch(`${second.url}/_matrix/client/versions`, { signal: AbortSignal.timeout(2_000) }));
  });
});
