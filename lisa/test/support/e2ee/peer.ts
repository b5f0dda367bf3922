// A second real end-to-end encryption client for acceptance tests: a human
// member's OlmMachine (the crypto library's own memory store) speaking to the
// real homeserver with that member's token. It sends with Lisa's own request
// mapping (src/e2ee/outgoing.ts), so both sides are the real library.

import * as sdk from "@matrix-org/matrix-sdk-crypto-wasm";
import { ok } from "../../../src/errors.ts";
import { MatrixError } from "../../../src/matrix/errors.ts";
import { deviceChangesOf } from "../../../src/matrix/device-schemas.ts";
import type { CryptoRequest, CryptoRequestPort } from "../../../src/matrix/port.ts";
import { sendOutgoing, type Outgoing } from "../../../src/e2ee/outgoing.ts";
import type { JsonObject, MatrixTestClient } from "../synapse.ts";

const DEADLINE_MS = 30_000;

/** The crypto endpoints through a test client's token. */
function portOf(client: MatrixTestClient): CryptoRequestPort {
  return {
    async cryptoRequest(request: CryptoRequest) {
      try {
        if (request.kind === "to_device") {
          const path = `/_matrix/client/v3/sendToDevice/${encodeURIComponent(request.eventType)}/${encodeURIComponent(request.txnId)}`;
          return ok(await client.request("PUT", path, { body: request.body }));
        }
        if (request.kind === "account_data") {
          return ok(await client.request("GET", `/_matrix/client/v3/user/${encodeURIComponent(client.userId)}/account_data/${encodeURIComponent(request.eventType)}`));
        }
        if (request.kind === "signing_keys_upload") {
          return ok(await client.request("POST", "/_matrix/client/v3/keys/device_signing/upload", { body: request.body as JsonObject }));
        }
        const path = { keys_upload: "upload", keys_query: "query", keys_claim: "claim", signatures_upload: "signatures/upload" }[request.kind];
        return ok(await client.request("POST", `/_matrix/client/v3/keys/${path}`, { body: request.body }));
      } catch (cause) {
        return { ok: false, error: new MatrixError("matrix_request_failed", { errcode: null, httpStatus: null, retryAfterMs: null }, false, cause) };
      }
    },
  };
}

export interface PeerEvent {
  readonly event_id: string;
  readonly type: string;
  readonly sender: string;
  readonly origin_server_ts: number;
  readonly content: Record<string, unknown>;
}

/** One member's E2EE client. */
export class E2eePeer {
  readonly client: MatrixTestClient;
  readonly machine: sdk.OlmMachine;
  readonly #http: CryptoRequestPort;
  #since: string | null = null;

  private constructor(client: MatrixTestClient, machine: sdk.OlmMachine) {
    this.client = client;
    this.machine = machine;
    this.#http = portOf(client);
  }

  /** Starts the member's device (the client's own device id) and uploads its keys. */
  static async start(client: MatrixTestClient): Promise<E2eePeer> {
    await sdk.initAsync();
    const machine = await sdk.OlmMachine.initialize(new sdk.UserId(client.userId), new sdk.DeviceId(client.deviceId));
    const peer = new E2eePeer(client, machine);
    await peer.flush();
    return peer;
  }

  async flush(): Promise<void> {
    for (let round = 0; round < 8; round += 1) {
      const requests = await this.machine.outgoingRequests();
      if (requests.length === 0) return;
      await this.#send(requests);
    }
  }

  async #send(requests: readonly Outgoing[]): Promise<void> {
    const sent = await sendOutgoing(this.machine, this.#http, requests, DEADLINE_MS, AbortSignal.timeout(DEADLINE_MS));
    if (!sent.ok) throw sent.error;
  }

  /** One `/sync` (device part to the machine first), returning the timeline events of `roomId`. */
  async sync(roomId: string, timeoutMs = 1_000): Promise<PeerEvent[]> {
    const query: Record<string, string> = { timeout: String(this.#since === null ? 0 : timeoutMs) };
    if (this.#since !== null) query["since"] = this.#since;
    const body = await this.client.request("GET", "/_matrix/client/v3/sync", { query, timeoutMs: timeoutMs + 30_000 });
    this.#since = String(body["next_batch"]);
    const device = deviceChangesOf(body);
    if (device !== undefined) {
      const lists = new sdk.DeviceLists(device.changed.map((u) => new sdk.UserId(u)), device.left.map((u) => new sdk.UserId(u)));
      const fallback = device.unusedFallbackKeyTypes === undefined ? undefined : new Set(device.unusedFallbackKeyTypes);
      await this.machine.receiveSyncChanges(JSON.stringify(device.toDevice), lists, new Map(Object.entries(device.oneTimeKeyCounts)), fallback);
    }
    await this.flush();
    const rooms = (body["rooms"] as { join?: Record<string, { timeline?: { events?: PeerEvent[] } }> } | undefined)?.join;
    return rooms?.[roomId]?.timeline?.events ?? [];
  }

  /**
   * Encrypts a text message for `members` and sends it. With `holdKeys` the
   * room key's to-device messages are kept back (a key that arrives late);
   * `deliver` sends them.
   */
  async sendText(roomId: string, members: readonly string[], body: string, options: { holdKeys?: boolean } = {}): Promise<{ eventId: string; deliver: () => Promise<void> }> {
    // The binding takes ownership of every id passed in a list: each call gets fresh ones.
    const users = (): sdk.UserId[] => members.map((m) => new sdk.UserId(m));
    await this.machine.updateTrackedUsers(users());
    await this.flush();
    const claim = await this.machine.getMissingSessions(users());
    if (claim !== undefined && claim !== null) await this.#send([claim]);
    const settings = new sdk.EncryptionSettings();
    // A fresh room key, so the held to-device messages are the only way to read this message.
    if (options.holdKeys === true) await this.machine.invalidateGroupSession(new sdk.RoomId(roomId));
    const shares = await this.machine.shareRoomKey(new sdk.RoomId(roomId), users(), settings);
    const deliver = (): Promise<void> => this.#send(shares);
    if (options.holdKeys !== true) await deliver();
    const content = await this.machine.encryptRoomEvent(new sdk.RoomId(roomId), "m.room.message", JSON.stringify({ msgtype: "m.text", body }));
    const eventId = await this.client.sendEvent(roomId, "m.room.encrypted", JSON.parse(content) as JsonObject);
    return { eventId, deliver };
  }

  /** The cleartext body of an encrypted event, or the library's error code. */
  async decryptBody(event: PeerEvent, roomId: string): Promise<string | { error: number }> {
    try {
      const decrypted = await this.machine.decryptRoomEvent(JSON.stringify({ ...event, room_id: roomId }), new sdk.RoomId(roomId),
        new sdk.DecryptionSettings(sdk.TrustRequirement.Untrusted));
      const inner = JSON.parse(decrypted.event) as { content?: { body?: unknown } };
      return String(inner.content?.body);
    } catch (error) {
      return { error: Number((error as { code?: unknown }).code) };
    }
  }

  /** The cleartext content of an encrypted event (with a relation kept outside the ciphertext), or null when it cannot be decrypted. */
  async decryptContent(event: PeerEvent, roomId: string): Promise<Record<string, unknown> | null> {
    return decryptedContent(this.machine, event, roomId);
  }

  close(): void {
    this.machine.close();
  }
}

/**
 * The cleartext content of an encrypted room event as a test peer's machine
 * decrypts it, with a relation kept outside the ciphertext put back; null
 * when it cannot be decrypted.
 */
export async function decryptedContent(
  machine: sdk.OlmMachine, event: { readonly content: Readonly<Record<string, unknown>> }, roomId: string,
): Promise<Record<string, unknown> | null> {
  try {
    const decrypted = await machine.decryptRoomEvent(JSON.stringify({ ...event, room_id: roomId }), new sdk.RoomId(roomId),
      new sdk.DecryptionSettings(sdk.TrustRequirement.Untrusted));
    const content = (JSON.parse(decrypted.event) as { content?: Record<string, unknown> }).content ?? {};
    const relates = event.content["m.relates_to"];
    return relates !== undefined && content["m.relates_to"] === undefined ? { ...content, "m.relates_to": relates } : content;
  } catch {
    return null;
  }
}
