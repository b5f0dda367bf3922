// LISA-E2EE-02, what asking for a missing room key can bring with the crypto
// library Lisa runs (matrix-sdk-crypto-wasm 18.9.0), measured on the fake
// homeserver's key server with real OlmMachines: her machine is set as
// src/e2ee/device.ts sets it (requests on, forwarding off). The spec lets a
// device ask its own devices and the sender's; the library asks only its own
// (and only when another of them is verified: Lisa has none), takes a
// forwarded key only in answer to its own request from its own verified
// device, and hands the application the forward with its session key zeroed.
// So a request Lisa built to the sender's devices is answered (the sender
// re-shares from the index it shared at) but can never open the event; held
// events wait for the room key itself. If a library upgrade changes this, this
// test fails and the docs (docs/architecture.md, "Held events") must follow.
import assert from "node:assert/strict";
import * as sdk from "@matrix-org/matrix-sdk-crypto-wasm";
import { after, describe, test } from "node:test";
import { FakeE2eePeer } from "../../support/e2ee/fake-peer.ts";
import { type FakeHomeserver, startFakeHomeserver } from "../../support/fake-homeserver.ts";

const ALICE = "@alice:localhost";
const LISA = "@lisa:localhost";
const ROOM = "!keys:localhost";

describe("LISA-E2EE-02: room-key requests with the crypto library Lisa runs", () => {
  let hs: FakeHomeserver | undefined;
  const peers: FakeE2eePeer[] = [];

  after(async () => {
    for (const peer of peers) peer.close();
    await hs?.close();
  });

  test("she sends no request of her own, and a forward from the sender's device never opens the event", async () => {
    hs = await startFakeHomeserver({ profile: "synapse" });
    const server = hs;
    for (const user of [ALICE, LISA]) server.addUser(user, "pw");
    server.createRoom(ROOM, [{ userId: ALICE, displayName: "Alice" }, { userId: LISA, displayName: "Lisa" }]);
    const alice = await FakeE2eePeer.start(server, ALICE, "ALICEDEV");
    const lisa = await FakeE2eePeer.start(server, LISA, "LISADEV");
    peers.push(alice, lisa);
    lisa.machine.roomKeyRequestsEnabled = true;
    lisa.machine.roomKeyForwardingEnabled = false;
    await lisa.machine.updateTrackedUsers([new sdk.UserId(ALICE)]);
    await lisa.sync();

    // Alice shares her room key with Lisa's device, but the to-device message is lost on the way (marked sent, never delivered).
    const users = (): sdk.UserId[] => [new sdk.UserId(ALICE), new sdk.UserId(LISA)];
    await alice.machine.updateTrackedUsers(users());
    await alice.sync();
    const claim = await alice.machine.getMissingSessions(users());
    assert.ok(claim !== undefined && claim !== null);
    await alice.machine.markRequestAsSent(claim.id as string, claim.type, JSON.stringify(server.keys.claim(JSON.parse(claim.body)).body));
    for (const share of await alice.machine.shareRoomKey(new sdk.RoomId(ROOM), users(), new sdk.EncryptionSettings())) {
      await alice.machine.markRequestAsSent(share.id as string, share.type, "{}");
    }
    const content = JSON.parse(await alice.machine.encryptRoomEvent(new sdk.RoomId(ROOM), "m.room.message", JSON.stringify({ msgtype: "m.text", body: "hello" }))) as Record<string, unknown>;
    const event = { event_id: "$held", type: "m.room.encrypted", sender: ALICE, origin_server_ts: 1, content };
    assert.equal(await lisa.decrypt(event, ROOM), null, "the key is missing");
    const own = (await lisa.machine.outgoingRequests()).filter((r) => r instanceof sdk.ToDeviceRequest && r.event_type === "m.room_key_request");
    assert.deepEqual(own, [], "the library asks nobody (no other verified device of hers)");

    // A request as the spec words it, to the sender's devices: Alice's machine answers with the key from the index it shared at.
    const request = {
      action: "request", request_id: "lisa-req-1", requesting_device_id: "LISADEV",
      body: { algorithm: content["algorithm"], room_id: ROOM, sender_key: content["sender_key"], session_id: content["session_id"] },
    };
    server.keys.sendToDevice(LISA, "m.room_key_request", { messages: { [ALICE]: { "*": request } } });
    await alice.sync();
    const part = server.keys.syncPart({ userId: LISA, deviceId: "LISADEV" }) as { to_device: { events: unknown[] } };
    const processed = await lisa.machine.receiveSyncChanges(JSON.stringify(part.to_device.events), new sdk.DeviceLists([], []), new Map(), new Set());
    const forwards = processed.filter((p) => p instanceof sdk.DecryptedToDeviceEvent)
      .map((p) => JSON.parse((p as sdk.DecryptedToDeviceEvent).rawEvent) as { type: string; content: Record<string, string> })
      .filter((e) => e.type === "m.forwarded_room_key");
    assert.equal(forwards.length, 1, "the sender's device forwards the key");
    assert.equal(await lisa.decrypt(event, ROOM), null, "the library did not take the forward (not its request, not her own device)");

    // What the application sees of the forward cannot open it either: its session key is zeroed.
    const forward = forwards[0]?.content ?? {};
    const ratchet = Buffer.from(String(forward["session_key"]), "base64").subarray(5, 5 + 128);
    assert.ok(ratchet.every((byte) => byte === 0), "the forwarded session key's ratchet is zeroed for the application");
    await lisa.machine.importExportedRoomKeys(JSON.stringify([{
      algorithm: forward["algorithm"], room_id: ROOM, sender_key: forward["sender_key"], session_id: forward["session_id"],
      session_key: forward["session_key"], sender_claimed_keys: { ed25519: forward["sender_claimed_ed25519_key"] }, forwarding_curve25519_key_chain: [],
    }]), () => undefined);
    assert.equal(await lisa.decrypt(event, ROOM), null, "importing what the application sees opens nothing");
  });
});
