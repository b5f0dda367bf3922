// Two real OlmMachines that reach each other without a homeserver: this file
// plays the server's part in key upload, key query, key claim and to-device
// delivery, so a sender's Megolm messages reach the receiver exactly as
// after a /sync. For measuring the crypto store's own cost only; the service
// is tested against real homeservers.

import type * as Sdk from "@matrix-org/matrix-sdk-crypto-wasm";

type SdkModule = typeof Sdk;

interface Party {
  readonly machine: Sdk.OlmMachine;
  readonly userId: string;
  readonly deviceId: string;
  deviceKeys?: unknown;
  oneTimeKeys: Record<string, unknown>;
  inbox: { type: string; sender: string; content: unknown }[];
}

export interface OlmPair {
  /** The sender encrypts `body` for the room (sharing the room key first), the receiver decrypts it. */
  send(body: string): Promise<{ ciphertextEvent: string; decrypt: () => Promise<string> }>;
}

function body(request: { body: string }): Record<string, unknown> {
  return JSON.parse(request.body) as Record<string, unknown>;
}

/** Answers every outgoing request of `party` as a homeserver would, in-process. */
async function serve(sdk: SdkModule, party: Party, everyone: readonly Party[]): Promise<void> {
  for (const request of await party.machine.outgoingRequests()) await answer(sdk, request, party, everyone);
}

type Outgoing = Sdk.KeysUploadRequest | Sdk.KeysQueryRequest | Sdk.KeysClaimRequest | Sdk.ToDeviceRequest | Sdk.SignatureUploadRequest | Sdk.RoomMessageRequest | Sdk.KeysBackupRequest;

async function answer(sdk: SdkModule, request: Outgoing, party: Party, everyone: readonly Party[]): Promise<void> {
  {
    let response: unknown = {};
    if (request.type === sdk.RequestType.KeysUpload) {
      const upload = body(request as Sdk.KeysUploadRequest);
      if (upload["device_keys"] !== undefined) party.deviceKeys = upload["device_keys"];
      Object.assign(party.oneTimeKeys, upload["one_time_keys"] ?? {});
      response = { one_time_key_counts: { signed_curve25519: Object.keys(party.oneTimeKeys).length } };
    } else if (request.type === sdk.RequestType.KeysQuery) {
      const wanted = Object.keys((body(request as Sdk.KeysQueryRequest)["device_keys"] ?? {}) as object);
      const deviceKeys: Record<string, Record<string, unknown>> = {};
      for (const user of wanted) {
        for (const p of everyone) if (p.userId === user && p.deviceKeys !== undefined) deviceKeys[user] = { [p.deviceId]: p.deviceKeys };
      }
      response = { device_keys: deviceKeys, failures: {} };
    } else if (request.type === sdk.RequestType.KeysClaim) {
      const claim = (body(request as Sdk.KeysClaimRequest)["one_time_keys"] ?? {}) as Record<string, Record<string, string>>;
      const claimed: Record<string, Record<string, Record<string, unknown>>> = {};
      for (const [user, devices] of Object.entries(claim)) {
        for (const device of Object.keys(devices)) {
          const owner = everyone.find((p) => p.userId === user && p.deviceId === device);
          const keyId = owner === undefined ? undefined : Object.keys(owner.oneTimeKeys)[0];
          if (owner === undefined || keyId === undefined) continue;
          claimed[user] = { [device]: { [keyId]: owner.oneTimeKeys[keyId] } };
          delete owner.oneTimeKeys[keyId];
        }
      }
      response = { one_time_keys: claimed, failures: {} };
    } else if (request.type === sdk.RequestType.ToDevice) {
      deliver(request as Sdk.ToDeviceRequest, party, everyone);
    }
    if (request.id !== undefined) await party.machine.markRequestAsSent(request.id, request.type, JSON.stringify(response));
  }
}

function deliver(request: Sdk.ToDeviceRequest, from: Party, everyone: readonly Party[]): void {
  const messages = (body(request)["messages"] ?? {}) as Record<string, Record<string, unknown>>;
  for (const [user, devices] of Object.entries(messages)) {
    for (const [device, content] of Object.entries(devices)) {
      const to = everyone.find((p) => p.userId === user && (p.deviceId === device || device === "*"));
      to?.inbox.push({ type: request.event_type, sender: from.userId, content });
    }
  }
}

async function syncToDevice(sdk: SdkModule, party: Party): Promise<void> {
  const events = party.inbox.splice(0);
  const counts = new Map([["signed_curve25519", Object.keys(party.oneTimeKeys).length]]);
  await party.machine.receiveSyncChanges(JSON.stringify(events), new sdk.DeviceLists(), counts, new Set());
}

export async function olmPair(sdk: SdkModule, receiver: Sdk.OlmMachine, sender: Sdk.OlmMachine, roomId: string): Promise<OlmPair> {
  const make = (machine: Sdk.OlmMachine): Party => ({ machine, userId: machine.userId.toString(), deviceId: machine.deviceId.toString(), oneTimeKeys: {}, inbox: [] });
  const r = make(receiver);
  const s = make(sender);
  const everyone = [r, s];
  await serve(sdk, r, everyone);
  await serve(sdk, s, everyone);
  await sender.updateTrackedUsers([receiver.userId]);
  await serve(sdk, s, everyone);
  const room = new sdk.RoomId(roomId);
  const settings = new sdk.EncryptionSettings();
  const decryption = new sdk.DecryptionSettings(sdk.TrustRequirement.Untrusted);
  let sequence = 0;
  return {
    async send(text) {
      const claim = await sender.getMissingSessions([receiver.userId]);
      if (claim !== undefined && claim !== null) await answer(sdk, claim, s, everyone);
      for (const request of await sender.shareRoomKey(room, [receiver.userId], settings)) {
        deliver(request, s, everyone);
        await sender.markRequestAsSent(request.id, request.type, "{}");
      }
      await serve(sdk, s, everyone);
      await syncToDevice(sdk, r);
      const content = await sender.encryptRoomEvent(room, "m.room.message", JSON.stringify({ msgtype: "m.text", body: text }));
      sequence += 1;
      const event = JSON.stringify({ type: "m.room.encrypted", event_id: `$bench${sequence}`, sender: s.userId, origin_server_ts: Date.now(), room_id: roomId, content: JSON.parse(content) as unknown });
      return {
        ciphertextEvent: event,
        decrypt: async () => {
          const decrypted = await receiver.decryptRoomEvent(event, room, decryption);
          return decrypted.event;
        },
      };
    },
  };
}
