// The cross-signing proof against one real homeserver, Lisa's device in
// this process (her crypto store, her Matrix client, her identity code) and
// Alice on an Element-like client (matrix-js-sdk, Rust crypto, insecure
// devices excluded). Before Lisa's device is cross-signed, Alice's client
// withholds its room key from her (`m.room_key.withheld`, `m.unverified`)
// and refuses her reply (`UNSIGNED_SENDER_DEVICE`): the test can fail. After
// `ensureIdentity` created her identity, Alice's client sees her device
// signed by its owner, shares its key (Lisa decrypts) and accepts her reply
// without a shield warning; a second `ensureIdentity` reuses the identity.
// The crypto store opens once per process: one homeserver per test file.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Secret } from "../../../src/config/secret.ts";
import { ensureIdentity, exportSeeds, queryOwnIdentity, type IdentityDeps } from "../../../src/e2ee/cross-signing.ts";
import { E2eeDevice } from "../../../src/e2ee/device.ts";
import { encodeRecoveryKey } from "../../../src/e2ee/recovery.ts";
import { cryptoStorePathFor, openCryptoStore, type CryptoStore } from "../../../src/e2ee/store.ts";
import { silentLogger } from "../../../src/log/logger.ts";
import { createMatrixClient, type MatrixClient } from "../../../src/matrix/client.ts";
import type { RawEvent } from "../../../src/matrix/port.ts";
import { acquireInstanceLock, type InstanceLock } from "../../../src/state/lock.ts";
import { type AcceptanceWorld, homeserverLabel, type HomeserverKind, pollUntil, startAcceptanceWorld } from "../acceptance-world.ts";
import { HUMAN_PASSWORD, LISA_DEVICE, LISA_ID } from "../acceptance/world.ts";
import { CANARY } from "../config.ts";
import { ElementPeer, endProcessAfterTests } from "./element-peer.ts";

const MEGOLM = "m.megolm.v1.aes-sha2";
const WAIT = 60_000;

/** Registers the scenario's tests for `kind`. */
export function describeCrossSigningProof(kind: HomeserverKind): void {
  endProcessAfterTests();
  describe(`LISA-XSIGN: Lisa's cross-signed device and an Element-like client (${homeserverLabel(kind)})`, () => {
    let world: AcceptanceWorld;
    let dir: string;
    let lock: InstanceLock;
    let store: CryptoStore;
    let matrix: MatrixClient;
    let device: E2eeDevice;
    let alice: ElementPeer;
    let room: string;
    let since: string | null = null;
    const toDevice: Readonly<Record<string, unknown>>[] = [];
    const members = (): string[] => [world.alice.userId, world.bob.userId, LISA_ID];
    const ids = (): IdentityDeps => ({ machine: device.machine, http: matrix, userId: LISA_ID, deviceId: LISA_DEVICE, deadlineMs: WAIT });

    async function lisaSync(): Promise<readonly RawEvent[]> {
      const batch = await matrix.sync({ since, timeoutMs: since === null ? 0 : 1_000, roomIds: [room], timelineLimit: 50, signal: AbortSignal.timeout(WAIT) });
      assert.ok(batch.ok, batch.ok ? "" : batch.error.code);
      toDevice.push(...(batch.value.device?.toDevice ?? []));
      await device.receiveSync(batch.value.device);
      await device.flush(AbortSignal.timeout(WAIT));
      since = batch.value.nextBatch;
      return batch.value.rooms.find((r) => r.roomId === room)?.events ?? [];
    }

    async function lisaSees(eventId: string): Promise<RawEvent> {
      let found: RawEvent | undefined;
      await pollUntil(async () => {
        found = (await lisaSync()).find((e) => e.event_id === eventId) ?? found;
        return found !== undefined;
      }, WAIT, () => `Lisa's sync shows ${eventId}`);
      return found as RawEvent;
    }

    async function lisaReply(body: string, txnId: string): Promise<string> {
      const encrypted = await device.encrypt(room, members(), {}, { type: "m.room.message", content: { msgtype: "m.text", body } }, AbortSignal.timeout(WAIT));
      assert.ok(encrypted.ok, encrypted.ok ? "" : encrypted.error.code);
      assert.equal(encrypted.value["algorithm"], MEGOLM);
      const sent = await matrix.sendRoomEvent(room, "m.room.encrypted", txnId, encrypted.value, AbortSignal.timeout(WAIT));
      assert.ok(sent.ok, sent.ok ? "" : sent.error.code);
      return sent.value;
    }

    before(async () => {
      world = await startAcceptanceWorld({ homeserver: kind, rooms: ["secret"] });
      room = world.room("secret");
      await world.alice.request("PUT", `/_matrix/client/v3/rooms/${encodeURIComponent(room)}/state/m.room.encryption/`, { body: { algorithm: MEGOLM } });
      dir = mkdtempSync(join(tmpdir(), "lisa-xsign-"));
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
      assert.ok((await matrix.login(AbortSignal.timeout(WAIT))).ok);
      const started = await E2eeDevice.start({ userId: LISA_ID, deviceId: LISA_DEVICE, store, http: matrix, log: silentLogger });
      assert.ok(started.ok);
      device = started.value;
      assert.equal((await device.flush(AbortSignal.timeout(WAIT))).failed, null);
      await lisaSync();
      alice = await ElementPeer.start(world.alice, HUMAN_PASSWORD);
    });

    after(async () => {
      alice?.stop();
      device?.close();
      store?.close();
      await matrix?.close();
      lock?.release();
      await world?.close();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    });

    test("LISA-XSIGN-05: before cross-signing, the Element-like client withholds its room key from her device and refuses her reply", async () => {
      assert.equal(await alice.seesSignedByOwner(LISA_ID, LISA_DEVICE), false);
      const sent = await alice.sendText(room, "Lisa, are you there?");
      const event = await lisaSees(sent);
      await pollUntil(async () => {
        await lisaSync();
        return toDevice.some((e) => e["type"] === "m.room_key.withheld");
      }, WAIT, () => "a withheld notice reaches Lisa's device");
      const withheld = toDevice.find((e) => e["type"] === "m.room_key.withheld");
      assert.equal((withheld?.["content"] as Record<string, unknown> | undefined)?.["code"], "m.unverified");
      const decrypted = await device.decrypt(event, room);
      assert.ok(!decrypted.ok, "her device cannot read a message whose key was withheld");
      const reply = await lisaReply("I am here (not cross-signed)", "xsign-before-1");
      assert.deepEqual(await alice.view(room, reply), { failure: "UNSIGNED_SENDER_DEVICE" });
    });

    test("LISA-XSIGN-01: her first start creates her identity, the server shows her device signed by it", async () => {
      const created = await ensureIdentity(ids(), null, AbortSignal.timeout(WAIT));
      assert.ok(created.ok, created.ok ? "" : created.error.code);
      assert.equal(created.value.kind, "created");
      const server = await queryOwnIdentity(ids(), AbortSignal.timeout(WAIT));
      assert.ok(server.ok);
      assert.equal(server.value.master, created.value.master);
      assert.equal(server.value.deviceSigned, true);
      // Another member's view: Bob's query shows her device signed by her self-signing key.
      const query = await world.bob.request("POST", "/_matrix/client/v3/keys/query", { body: { device_keys: { [LISA_ID]: [] } } });
      const selfSigning = Object.values((query["self_signing_keys"] as Record<string, { keys: Record<string, string> }>)[LISA_ID]?.keys ?? {})[0];
      const signatures = (query["device_keys"] as Record<string, Record<string, { signatures: Record<string, Record<string, string>> }>>)[LISA_ID]?.[LISA_DEVICE]?.signatures;
      assert.equal(typeof signatures?.[LISA_ID]?.[`ed25519:${selfSigning}`], "string");
    });

    test("LISA-XSIGN-06: once cross-signed, the client shares its key with her, and decrypts and accepts her reply without a warning", async () => {
      await alice.waitSignedByOwner(LISA_ID, LISA_DEVICE);
      const sent = await alice.sendText(room, "Lisa, what is the secret word?");
      const event = await lisaSees(sent);
      let decrypted = await device.decrypt(event, room);
      await pollUntil(async () => {
        decrypted = await device.decrypt(event, room);
        if (!decrypted.ok) await lisaSync();
        return decrypted.ok;
      }, WAIT, () => "Lisa decrypts the message sent after she was cross-signed");
      assert.ok(decrypted.ok);
      assert.equal(decrypted.value.content["body"], "Lisa, what is the secret word?");
      const reply = await lisaReply("the word is otter", "xsign-after-1");
      assert.deepEqual(await alice.view(room, reply), { body: "the word is otter", shield: "NONE" });
    });

    test("LISA-XSIGN-03: a later start reuses her identity; its recovery key holds the same master key", async () => {
      const before = await exportSeeds(device.machine);
      assert.ok(before !== null, "the store holds her private cross-signing keys");
      const again = await ensureIdentity(ids(), null, AbortSignal.timeout(WAIT));
      assert.ok(again.ok, again.ok ? "" : again.error.code);
      assert.equal(again.value.kind, "present");
      assert.deepEqual(await exportSeeds(device.machine), before);
      const key = encodeRecoveryKey(before);
      const file = readFileSync(cryptoStorePathFor(join(dir, "state.db")));
      for (const secret of [key, key.replace(/ /g, ""), before.master, before.selfSigning, CANARY.storePassphrase]) {
        assert.equal(file.includes(Buffer.from(secret)), false, "no recovery secret in the clear in the crypto store file");
      }
    });
  });
}
