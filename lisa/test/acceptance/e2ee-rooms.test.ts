// Issue 33 (encrypted rooms), the building blocks against each real
// homeserver: Lisa's device (her crypto store, her Matrix client, her
// encryption code, in this process) and a second real E2EE client for Alice
// (test/support/e2ee/peer.ts). Alice's encrypted mention decrypts on Lisa's
// side; Lisa's encrypted replies, with the room key shared before every one
// and rotated every two messages, decrypt on Alice's; a key that arrives late
// is pending, then decrypts; a member who joins later reads what follows her
// join. The service does not use these yet; this proves them.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Secret } from "../../src/config/secret.ts";
import { E2eeDevice } from "../../src/e2ee/device.ts";
import { openCryptoStore, cryptoStorePathFor, type CryptoStore } from "../../src/e2ee/store.ts";
import { silentLogger } from "../../src/log/logger.ts";
import { createMatrixClient, type MatrixClient } from "../../src/matrix/client.ts";
import type { RawEvent } from "../../src/matrix/port.ts";
import { acquireInstanceLock, type InstanceLock } from "../../src/state/lock.ts";
import { type AcceptanceWorld, homeserverLabel, homeserversUnderTest, pollUntil, startAcceptanceWorld } from "../support/acceptance-world.ts";
import { LISA_DEVICE, LISA_ID } from "../support/acceptance/world.ts";
import { CANARY } from "../support/config.ts";
import { E2eePeer, type PeerEvent } from "../support/e2ee/peer.ts";

const MEGOLM = "m.megolm.v1.aes-sha2";
// One homeserver per process: the crypto store opens once per process.
const kind = homeserversUnderTest()[0] ?? "synapse";

describe(`LISA-MEGOLM-01: encrypted rooms, Lisa's device and a second real client (${homeserverLabel(kind)})`, () => {
  let world: AcceptanceWorld;
  let dir: string;
  let lock: InstanceLock;
  let store: CryptoStore;
  let matrix: MatrixClient;
  let device: E2eeDevice;
  let alice: E2eePeer;
  let room: string;
  let since: string | null = null;
  const members = (): string[] => [world.alice.userId, world.bob.userId, LISA_ID];

  /** One of Lisa's syncs in the order the service keeps: the device part first, then the room's events. */
  async function lisaSync(): Promise<readonly RawEvent[]> {
    const batch = await matrix.sync({ since, timeoutMs: since === null ? 0 : 1_000, roomIds: [room], timelineLimit: 50, signal: AbortSignal.timeout(60_000) });
    assert.ok(batch.ok, batch.ok ? "" : batch.error.code);
    await device.receiveSync(batch.value.device);
    await device.flush(AbortSignal.timeout(60_000));
    since = batch.value.nextBatch;
    return batch.value.rooms.find((r) => r.roomId === room)?.events ?? [];
  }

  async function lisaSees(eventId: string): Promise<RawEvent> {
    let found: RawEvent | undefined;
    await pollUntil(async () => {
      found = (await lisaSync()).find((e) => e.event_id === eventId) ?? found;
      return found !== undefined;
    }, 60_000, () => `Lisa's sync shows ${eventId}`);
    return found as RawEvent;
  }

  async function peerReads(peer: E2eePeer, eventIds: readonly string[]): Promise<PeerEvent[]> {
    const seen = new Map<string, PeerEvent>();
    await pollUntil(async () => {
      for (const e of await peer.sync(room)) seen.set(e.event_id, e);
      return eventIds.every((id) => seen.has(id));
    }, 60_000, () => `${peer.client.userId} sees ${eventIds.length} events`);
    return eventIds.map((id) => seen.get(id) as PeerEvent);
  }

  async function lisaReply(body: string, txnId: string, rotationPeriodMessages: number, to = members()): Promise<{ eventId: string; sessionId: unknown }> {
    const encrypted = await device.encrypt(room, to, { rotationPeriodMessages }, { type: "m.room.message", content: { msgtype: "m.text", body } }, AbortSignal.timeout(60_000));
    assert.ok(encrypted.ok, encrypted.ok ? "" : encrypted.error.code);
    assert.equal(encrypted.value["algorithm"], MEGOLM);
    const sent = await matrix.sendRoomEvent(room, "m.room.encrypted", txnId, encrypted.value, AbortSignal.timeout(60_000));
    assert.ok(sent.ok, sent.ok ? "" : sent.error.code);
    return { eventId: sent.value, sessionId: encrypted.value["session_id"] };
  }

  before(async () => {
    world = await startAcceptanceWorld({ homeserver: kind, rooms: ["secret"] });
    room = world.room("secret");
    await world.alice.request("PUT", `/_matrix/client/v3/rooms/${encodeURIComponent(room)}/state/m.room.encryption/`, { body: { algorithm: MEGOLM } });
    dir = mkdtempSync(join(tmpdir(), "lisa-e2ee-rooms-"));
    const locked = acquireInstanceLock(join(dir, "state.db"));
    assert.ok(locked.ok);
    lock = locked.value;
    const opened = await openCryptoStore(lock, join(dir, "state.db"), new Secret("e2ee.store_passphrase", CANARY.storePassphrase));
    assert.ok(opened.ok);
    store = opened.value;
    matrix = createMatrixClient(
      { homeserverUrl: world.homeserver.url, userId: LISA_ID, deviceId: LISA_DEVICE, deviceDisplayName: "Lisa", password: new Secret("matrix.password", CANARY.matrixPassword) },
      { log: silentLogger },
    );
    assert.ok((await matrix.login(AbortSignal.timeout(60_000))).ok);
    const started = await E2eeDevice.start({ userId: LISA_ID, deviceId: LISA_DEVICE, store, http: matrix, log: silentLogger });
    assert.ok(started.ok);
    device = started.value;
    assert.equal((await device.flush(AbortSignal.timeout(60_000))).failed, null);
    await lisaSync();
    alice = await E2eePeer.start(world.alice);
    await alice.sync(room);
  });

  after(async () => {
    alice?.close();
    device?.close();
    store?.close();
    await matrix?.close();
    lock?.release();
    await world?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  test("LISA-MEGOLM-01: Alice's encrypted mention decrypts on Lisa's device after the sync that brought its key", async () => {
    const sent = await alice.sendText(room, members(), "Lisa, what is the secret word?");
    const event = await lisaSees(sent.eventId);
    assert.equal(event.type, "m.room.encrypted");
    const decrypted = await device.decrypt(event, room);
    assert.ok(decrypted.ok, decrypted.ok ? "" : decrypted.error.code);
    assert.equal(decrypted.value.type, "m.room.message");
    assert.equal(decrypted.value.content["body"], "Lisa, what is the secret word?");
  });

  test("LISA-MEGOLM-01: Lisa's encrypted replies decrypt on Alice's client, the room key shared before each and rotated every two", async () => {
    const replies = [];
    for (let i = 1; i <= 5; i += 1) replies.push(await lisaReply(`reply ${i}: the word is otter`, `lisa-e2ee-reply-${i}`, 2));
    const events = await peerReads(alice, replies.map((r) => r.eventId));
    for (const [i, event] of events.entries()) {
      assert.equal(event.type, "m.room.encrypted");
      assert.equal(await alice.decryptBody(event, room), `reply ${i + 1}: the word is otter`);
    }
    assert.equal(new Set(replies.map((r) => r.sessionId)).size, 3, "five messages, a new room key every two");
  });

  test("LISA-MEGOLM-01: a message whose room key arrives late is pending, then decrypts once the key comes", async () => {
    const sent = await alice.sendText(room, members(), "Lisa, this key comes late", { holdKeys: true });
    const event = await lisaSees(sent.eventId);
    const early = await device.decrypt(event, room);
    assert.ok(!early.ok);
    assert.equal(early.error.code, "decryption_pending");
    assert.equal(early.error.retryable, true);
    await sent.deliver();
    let late = early as Awaited<ReturnType<E2eeDevice["decrypt"]>>;
    await pollUntil(async () => {
      await lisaSync();
      late = await device.decrypt(event, room);
      return late.ok;
    }, 60_000, () => "the late key decrypts the message");
    assert.ok(late.ok);
    assert.equal(late.value.content["body"], "Lisa, this key comes late");
  });

  test("LISA-MEGOLM-01: a member who joins later reads Lisa's next reply, and the store keeps no plaintext", async () => {
    await world.carol.join(room);
    const carol = await E2eePeer.start(world.carol);
    try {
      await carol.sync(room);
      const next = await lisaReply("welcome, Carol", "lisa-e2ee-welcome", 100, [...members(), world.carol.userId]);
      const [event] = await peerReads(carol, [next.eventId]);
      assert.ok(event !== undefined);
      assert.equal(await carol.decryptBody(event, room), "welcome, Carol");
    } finally {
      carol.close();
    }
    const file = readFileSync(cryptoStorePathFor(join(dir, "state.db")));
    for (const plain of ["secret word", "otter", "welcome, Carol", "this key comes late", CANARY.storePassphrase]) {
      assert.equal(file.includes(Buffer.from(plain)), false, `"${plain.slice(0, 12)}" is not in the crypto store`);
    }
  });
});
