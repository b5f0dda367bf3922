// End-to-end encryption key endpoints of the fake (LISA-E2EE, LISA-XSIGN), one
// store for both: device keys and one-time keys (`/keys/upload`,
// `/keys/query` with cross-signing keys, `/keys/claim`), to-device messages
// (`/sendToDevice`) and the device part of `/sync` (to-device events, one-time
// key counts, unused fallback key types, device list changes), with the
// spec's wire shapes; cross-signing uploads are in cross-signing.ts. The keys
// are opaque here: the fake verifies no signature (real servers are tested
// in acceptance). As Continuwuity 26.8 was measured to answer (and the
// others too): a one-time or fallback key that is not an object with a `key`
// string is dropped silently (still 200); a claim gets the fallback key once
// the one-time keys have run out, and a claimed fallback key is no longer
// listed as unused. Per profile in `/sync`: Synapse always sends the count
// (0 for an empty pool), Continuwuity leaves it out when the pool is empty,
// Dendrite sends it once the device takes part in encryption. A change of the
// count does not wake a waiting `/sync`; a to-device message does. To-device
// messages delivered in a response are dropped when the same device syncs
// again (the acknowledgement real servers take from `since`).

import type { Accounts, Session } from "./accounts.ts";
import { CrossSigningKeys } from "./cross-signing.ts";
import { errorReply, isObject, okReply, type Reply } from "./reply.ts";
import type { HomeserverProfile } from "./types.ts";

type Json = Record<string, unknown>;

/** One to-device message as `/sync` delivers it. */
export interface ToDeviceMessage {
  readonly type: string;
  readonly sender: string;
  readonly content: unknown;
}

/** A device as the key endpoints address it (a `Session` is one). */
export interface DeviceRef {
  readonly userId: string;
  readonly deviceId: string;
}

interface DeviceKeys {
  keys: Json | null;
  readonly oneTime: Map<string, Json>;
  /** By algorithm: the key with its `id` and whether a claim `used` it. */
  readonly fallback: Map<string, Json>;
}

const ref = (d: DeviceRef): string => `${d.userId}\u0000${d.deviceId}`;

/** A one-time or fallback key a server can parse: an object with a `key` string. */
function parsableKey(value: unknown): value is Json {
  return isObject(value) && typeof value["key"] === "string";
}

/** The fake's key store, cross-signing keys and to-device queues. */
export class KeyServer {
  readonly #profile: HomeserverProfile;
  readonly #devices = new Map<string, Map<string, DeviceKeys>>();
  readonly #signing: CrossSigningKeys;
  readonly #queues = new Map<string, ToDeviceMessage[]>();
  readonly #delivered = new Map<string, number>();
  /** Per user, how often its keys changed; per device, the counts it was last told of. */
  readonly #versions = new Map<string, number>();
  readonly #told = new Map<string, Map<string, number>>();
  readonly #wake: () => void;

  constructor(profile: HomeserverProfile, accounts: Accounts, wake: () => void) {
    this.#profile = profile;
    this.#wake = wake;
    this.#signing = new CrossSigningKeys(accounts, {
      deviceKeys: (userId, deviceId) => this.#devices.get(userId)?.get(deviceId)?.keys ?? null,
      changed: (userId) => this.#changed(userId),
    });
  }

  /** Cross-signing uploads seen: with or without `auth`, and their status. */
  get signingUploads(): readonly { readonly withAuth: boolean; readonly status: number }[] {
    return this.#signing.uploads;
  }

  #changed(userId: string): void {
    this.#versions.set(userId, (this.#versions.get(userId) ?? 0) + 1);
  }

  #device(device: DeviceRef): DeviceKeys {
    let devices = this.#devices.get(device.userId);
    if (devices === undefined) this.#devices.set(device.userId, (devices = new Map()));
    let keys = devices.get(device.deviceId);
    if (keys === undefined) devices.set(device.deviceId, (keys = { keys: null, oneTime: new Map(), fallback: new Map() }));
    return keys;
  }

  /** `POST /keys/upload` of `device`: device keys, one-time keys, fallback keys; answers the counts. */
  upload(device: DeviceRef, body: unknown): Reply {
    if (!isObject(body)) return errorReply(400, "M_BAD_JSON", "Invalid upload");
    const stored = this.#device(device);
    if (isObject(body["device_keys"])) {
      stored.keys = { ...body["device_keys"] };
      this.#changed(device.userId);
    }
    for (const [id, value] of Object.entries(isObject(body["one_time_keys"]) ? body["one_time_keys"] : {})) {
      if (parsableKey(value)) stored.oneTime.set(id, value);
    }
    for (const [id, value] of Object.entries(isObject(body["fallback_keys"]) ? body["fallback_keys"] : {})) {
      if (parsableKey(value)) stored.fallback.set(id.split(":")[0] ?? id, { ...value, id });
    }
    return okReply({ one_time_key_counts: this.counts(device) });
  }

  /** Unclaimed one-time keys of `device` by algorithm (`signed_curve25519` always, 0 for none). */
  counts(device: DeviceRef): Record<string, number> {
    const counts: Record<string, number> = { signed_curve25519: 0 };
    for (const id of this.#devices.get(device.userId)?.get(device.deviceId)?.oneTime.keys() ?? []) {
      const algorithm = id.split(":")[0] ?? id;
      counts[algorithm] = (counts[algorithm] ?? 0) + 1;
    }
    return counts;
  }

  /** Unclaimed signed_curve25519 one-time keys of a device. */
  oneTimeKeyCount(userId: string, deviceId: string): number {
    return this.counts({ userId, deviceId })["signed_curve25519"] ?? 0;
  }

  /** Algorithms of the device's fallback keys not claimed yet (`device_unused_fallback_key_types`). */
  unusedFallbackTypes(userId: string, deviceId: string): string[] {
    return [...(this.#devices.get(userId)?.get(deviceId)?.fallback ?? [])].filter(([, key]) => key["used"] !== true).map(([algorithm]) => algorithm);
  }

  /** `POST /keys/query` of `requester`: device keys of each asked user (all devices when the list is empty) and cross-signing keys. */
  query(requester: DeviceRef, body: unknown): Reply {
    const wanted = isObject(body) && isObject(body["device_keys"]) ? body["device_keys"] : {};
    const deviceKeys: Record<string, Json> = {};
    const masters: Json = {};
    const selfSigning: Json = {};
    const userSigning: Json = {};
    for (const [userId, ids] of Object.entries(wanted)) {
      const only = Array.isArray(ids) && ids.length > 0 ? new Set(ids) : null;
      const devices: Json = {};
      for (const [deviceId, device] of this.#devices.get(userId) ?? []) {
        if (device.keys !== null && (only === null || only.has(deviceId))) devices[deviceId] = device.keys;
      }
      deviceKeys[userId] = devices;
      const signing = this.#signing.of(userId);
      if (signing?.master !== undefined) masters[userId] = signing.master;
      if (signing?.self_signing !== undefined) selfSigning[userId] = signing.self_signing;
      if (signing?.user_signing !== undefined && userId === requester.userId) userSigning[userId] = signing.user_signing;
    }
    return okReply({ device_keys: deviceKeys, master_keys: masters, self_signing_keys: selfSigning, user_signing_keys: userSigning, failures: {} });
  }

  /** `POST /keys/claim`: one one-time key per asked device, or its fallback key once they have run out. */
  claim(body: unknown): Reply {
    const wanted = isObject(body) && isObject(body["one_time_keys"]) ? body["one_time_keys"] : {};
    const result: Record<string, Record<string, Json>> = {};
    for (const [userId, devices] of Object.entries(wanted)) {
      for (const [deviceId, algorithm] of Object.entries(isObject(devices) ? devices : {})) {
        const device = this.#devices.get(userId)?.get(deviceId);
        if (device === undefined || typeof algorithm !== "string") continue;
        const id = [...device.oneTime.keys()].find((key) => key.startsWith(`${algorithm}:`));
        let claimed: [string, Json] | null = null;
        if (id !== undefined) {
          claimed = [id, device.oneTime.get(id) as Json];
          device.oneTime.delete(id);
        } else {
          const fallback = device.fallback.get(algorithm);
          if (fallback !== undefined) {
            fallback["used"] = true;
            const { id: fallbackId, used: _used, ...key } = fallback;
            claimed = [String(fallbackId), key];
          }
        }
        if (claimed !== null) (result[userId] ??= {})[deviceId] = { [claimed[0]]: claimed[1] };
      }
    }
    return okReply({ one_time_keys: result, failures: {} });
  }

  /** `POST /keys/device_signing/upload` (cross-signing.ts). */
  signingUpload(session: Session, body: unknown): Reply {
    return this.#signing.upload(session, body);
  }

  /** `POST /keys/signatures/upload` (cross-signing.ts). */
  signaturesUpload(body: unknown): Reply {
    return this.#signing.signaturesUpload(body);
  }

  /** `PUT /sendToDevice/{type}/{txnId}` from `sender`: each message queued for its device (`*`: every device of the user). */
  sendToDevice(sender: string, type: string, body: unknown): Reply {
    const messages = isObject(body) && isObject(body["messages"]) ? body["messages"] : null;
    if (messages === null) return errorReply(400, "M_BAD_JSON", "Invalid to-device body");
    for (const [userId, devices] of Object.entries(messages)) {
      if (!isObject(devices)) continue;
      for (const [deviceId, content] of Object.entries(devices)) {
        const known = [...(this.#devices.get(userId) ?? [])].filter(([, d]) => d.keys !== null).map(([id]) => id);
        for (const target of deviceId === "*" ? known : [deviceId]) {
          const queue = ref({ userId, deviceId: target });
          this.#queues.set(queue, [...(this.#queues.get(queue) ?? []), { type, sender, content }]);
        }
      }
    }
    this.#wake();
    return okReply({});
  }

  /** Whether `device` takes part in encryption (uploaded device keys or was sent a message): only then does its `/sync` carry the whole device part. */
  knows(device: DeviceRef): boolean {
    return (this.#devices.get(device.userId)?.get(device.deviceId)?.keys ?? null) !== null || this.#queues.has(ref(device));
  }

  /** Whether `device` has to-device messages waiting (a long-poll returns for them). */
  hasPending(device: DeviceRef): boolean {
    return (this.#queues.get(ref(device))?.length ?? 0) > (this.#delivered.get(ref(device)) ?? 0);
  }

  /**
   * The one-time key count and unused fallback key types of `device` as the
   * profile puts them in `/sync` (see the file comment); empty when this
   * profile sends none for it.
   */
  countsPart(device: DeviceRef): Json {
    if (this.#profile === "dendrite" && !this.knows(device)) return {};
    const part: Json = {};
    const counts = this.counts(device);
    if (this.#profile === "continuwuity" && counts["signed_curve25519"] === 0) delete counts["signed_curve25519"];
    if (Object.keys(counts).length > 0) part["device_one_time_keys_count"] = counts;
    part["device_unused_fallback_key_types"] = this.unusedFallbackTypes(device.userId, device.deviceId);
    return part;
  }

  /**
   * The device part of one `/sync` response of `device`: what the previous
   * response delivered is acknowledged now, the rest is delivered (and
   * repeated until the device syncs again). A user whose keys changed since
   * the device's last response is listed in `device_lists.changed` (every
   * user with keys, to a device's first sync: a superset, as the spec allows).
   */
  syncPart(device: DeviceRef): Json {
    const key = ref(device);
    const queue = (this.#queues.get(key) ?? []).slice(this.#delivered.get(key) ?? 0);
    this.#queues.set(key, queue);
    this.#delivered.set(key, queue.length);
    const told = this.#told.get(key) ?? new Map<string, number>();
    this.#told.set(key, told);
    const changed = [...this.#versions].filter(([user, version]) => (told.get(user) ?? 0) < version).map(([user, version]) => {
      told.set(user, version);
      return user;
    });
    return { to_device: { events: queue }, ...this.countsPart(device), device_lists: { changed, left: [] } };
  }
}
