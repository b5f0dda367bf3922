// A member's real E2EE client (OlmMachine) on the fake homeserver, in
// process: its key upload, key query, key claim and to-device messages go to
// the fake's key server (test/support/fake-homeserver/keys.ts) as they would
// over HTTP, and its encrypted messages are posted as `m.room.encrypted`
// events. For integration tests and the bench; acceptance uses the real
// servers (peer.ts).

import * as sdk from "@matrix-org/matrix-sdk-crypto-wasm";
import { ok } from "../../../src/errors.ts";
import type { CryptoRequest, CryptoRequestPort } from "../../../src/matrix/port.ts";
import { sendOutgoing, type Outgoing } from "../../../src/e2ee/outgoing.ts";
import type { FakeHomeserver } from "../fake-homeserver.ts";
import type { DeviceRef } from "../fake-homeserver/keys.ts";
import { decryptedContent } from "./peer.ts";

const DEADLINE_MS = 30_000;

function portOf(hs: FakeHomeserver, device: DeviceRef): CryptoRequestPort {
  return {
    cryptoRequest: async (request: CryptoRequest) => {
      const reply = request.kind === "keys_upload" ? hs.keys.upload(device, request.body)
        : request.kind === "keys_query" ? hs.keys.query(device, request.body)
        : request.kind === "keys_claim" ? hs.keys.claim(request.body)
        : request.kind === "to_device" ? hs.keys.sendToDevice(device.userId, request.eventType, request.body)
        : { status: 200, body: {} };
      if (reply.status !== 200) throw new Error(`fake key server answered ${reply.status}`);
      return ok(reply.body);
    },
  };
}

/** One member's device on the fake homeserver. */
export class FakeE2eePeer {
  readonly machine: sdk.OlmMachine;
  readonly #hs: FakeHomeserver;
  readonly #device: DeviceRef;
  readonly #http: CryptoRequestPort;

  private constructor(hs: FakeHomeserver, device: DeviceRef, machine: sdk.OlmMachine) {
    this.#hs = hs;
    this.#device = device;
    this.machine = machine;
    this.#http = portOf(hs, device);
  }

  /** Starts the member's device and uploads its keys. */
  static async start(hs: FakeHomeserver, userId: string, deviceId: string): Promise<FakeE2eePeer> {
    await sdk.initAsync();
    const machine = await sdk.OlmMachine.initialize(new sdk.UserId(userId), new sdk.DeviceId(deviceId));
    const peer = new FakeE2eePeer(hs, { userId, deviceId }, machine);
    await peer.sync();
    return peer;
  }

  async #send(requests: readonly Outgoing[]): Promise<void> {
    const sent = await sendOutgoing(this.machine, this.#http, requests, DEADLINE_MS, AbortSignal.timeout(DEADLINE_MS));
    if (!sent.ok) throw sent.error;
  }

  /** The device part of a sync (to-device messages, device lists, key counts) to the machine, then its requests sent. */
  async sync(): Promise<void> {
    const part = this.#hs.keys.syncPart(this.#device) as {
      to_device: { events: unknown[] }; device_lists: { changed: string[]; left: string[] }; device_one_time_keys_count?: Record<string, number>;
    };
    const lists = new sdk.DeviceLists(part.device_lists.changed.map((u) => new sdk.UserId(u)), part.device_lists.left.map((u) => new sdk.UserId(u)));
    await this.machine.receiveSyncChanges(JSON.stringify(part.to_device.events), lists, new Map(Object.entries(part.device_one_time_keys_count ?? {})), new Set());
    for (let round = 0; round < 8; round += 1) {
      const requests = await this.machine.outgoingRequests();
      if (requests.length === 0) return;
      await this.#send(requests);
    }
  }

  /**
   * Encrypts `content` for `members` and posts it to `roomId`; with `holdKeys`
   * the room key's to-device messages are kept back until `deliver` is called.
   */
  async send(roomId: string, members: readonly string[], content: Record<string, unknown>, options: { holdKeys?: boolean } = {}): Promise<{ eventId: string; deliver: () => Promise<void> }> {
    const { encrypted, deliver } = await this.encrypt(roomId, members, content, options);
    return { eventId: this.post(roomId, encrypted), deliver };
  }

  /** Posts an encrypted content (from `encrypt`) to `roomId` as this member; returns the event id. */
  post(roomId: string, encrypted: Record<string, unknown>): string {
    return this.#hs.send(roomId, this.#device.userId, encrypted, "m.room.encrypted");
  }

  /** Encrypts `content` for `members` (room key shared first, unless held back) without posting it. */
  async encrypt(roomId: string, members: readonly string[], content: Record<string, unknown>, options: { holdKeys?: boolean } = {}): Promise<{ encrypted: Record<string, unknown>; deliver: () => Promise<void> }> {
    const users = (): sdk.UserId[] => members.map((m) => new sdk.UserId(m));
    await this.machine.updateTrackedUsers(users());
    await this.sync();
    const claim = await this.machine.getMissingSessions(users());
    if (claim !== undefined && claim !== null) await this.#send([claim]);
    if (options.holdKeys === true) await this.machine.invalidateGroupSession(new sdk.RoomId(roomId));
    const shares = await this.machine.shareRoomKey(new sdk.RoomId(roomId), users(), new sdk.EncryptionSettings());
    const deliver = (): Promise<void> => this.#send(shares);
    if (options.holdKeys !== true) await deliver();
    const encrypted = await this.machine.encryptRoomEvent(new sdk.RoomId(roomId), "m.room.message", JSON.stringify(content));
    return { encrypted: JSON.parse(encrypted) as Record<string, unknown>, deliver };
  }

  /** The cleartext content of an encrypted event (after a sync brought its key), or null. */
  async decrypt(event: { readonly content: Readonly<Record<string, unknown>> } & Record<string, unknown>, roomId: string): Promise<Record<string, unknown> | null> {
    return decryptedContent(this.machine, event, roomId);
  }

  close(): void {
    this.machine.close();
  }
}
