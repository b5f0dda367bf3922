// End-to-end encryption endpoints of the fake (encrypted rooms, LISA-E2EE):
// device keys and one-time keys (`/keys/upload`, `/keys/query`,
// `/keys/claim`), to-device messages (`/sendToDevice`) and the device part of
// `/sync` (to-device events, one-time key counts, device list changes), with
// the spec's wire shapes. The keys are opaque here: the fake stores and hands
// them out, it verifies no signature (real servers are tested in acceptance).
// To-device messages delivered in a response are dropped when the same
// device syncs again (the acknowledgement real servers take from `since`).

import type { Session } from "./accounts.ts";
import { errorReply, okReply, type Reply } from "./reply.ts";

/** One to-device message as `/sync` delivers it. */
export interface ToDeviceMessage {
  readonly type: string;
  readonly sender: string;
  readonly content: unknown;
}

/** A device as the key endpoints address it. */
export interface DeviceRef {
  readonly userId: string;
  readonly deviceId: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const key = (d: DeviceRef): string => `${d.userId}\u0000${d.deviceId}`;

/** The fake's key store and to-device queues. */
export class KeyServer {
  readonly #deviceKeys = new Map<string, Map<string, unknown>>();
  readonly #oneTimeKeys = new Map<string, Map<string, unknown>>();
  readonly #fallbackKeys = new Map<string, Map<string, unknown>>();
  readonly #queues = new Map<string, ToDeviceMessage[]>();
  readonly #delivered = new Map<string, number>();
  /** Per user, how often its device keys changed; per device, the counts it was last told of. */
  readonly #versions = new Map<string, number>();
  readonly #told = new Map<string, Map<string, number>>();
  readonly #wake: () => void;

  constructor(wake: () => void) {
    this.#wake = wake;
  }

  /** `POST /keys/upload` of `device`: device keys, one-time keys, fallback keys; answers the counts. */
  upload(device: DeviceRef, body: unknown): Reply {
    if (!isRecord(body)) return errorReply(400, "M_BAD_JSON", "Invalid upload");
    const deviceKeys = body["device_keys"];
    if (isRecord(deviceKeys)) {
      const devices = this.#deviceKeys.get(device.userId) ?? new Map<string, unknown>();
      devices.set(device.deviceId, deviceKeys);
      this.#deviceKeys.set(device.userId, devices);
      this.#versions.set(device.userId, (this.#versions.get(device.userId) ?? 0) + 1);
    }
    for (const [field, target] of [["one_time_keys", this.#oneTimeKeys], ["fallback_keys", this.#fallbackKeys]] as const) {
      const keys = body[field];
      if (!isRecord(keys)) continue;
      const stored = target.get(key(device)) ?? new Map<string, unknown>();
      if (field === "fallback_keys") stored.clear();
      for (const [id, value] of Object.entries(keys)) stored.set(id, value);
      target.set(key(device), stored);
    }
    return okReply({ one_time_key_counts: this.counts(device) });
  }

  /** Unclaimed one-time keys of `device` by algorithm. */
  counts(device: DeviceRef): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const id of this.#oneTimeKeys.get(key(device))?.keys() ?? []) {
      const algorithm = id.split(":")[0] ?? id;
      counts[algorithm] = (counts[algorithm] ?? 0) + 1;
    }
    return counts;
  }

  /** `POST /keys/query`: the device keys of each asked user (all devices when the list is empty). */
  query(body: unknown): Reply {
    const asked = isRecord(body) && isRecord(body["device_keys"]) ? body["device_keys"] : {};
    const deviceKeys: Record<string, Record<string, unknown>> = {};
    for (const [userId, wanted] of Object.entries(asked)) {
      const devices = this.#deviceKeys.get(userId);
      const ids = Array.isArray(wanted) && wanted.length > 0 ? wanted.filter((d): d is string => typeof d === "string") : [...(devices?.keys() ?? [])];
      const found: Record<string, unknown> = {};
      for (const id of ids) if (devices?.has(id) === true) found[id] = devices.get(id);
      deviceKeys[userId] = found;
    }
    return okReply({ device_keys: deviceKeys, failures: {} });
  }

  /** `POST /keys/claim`: one one-time key per asked device (its fallback key when none is left). */
  claim(body: unknown): Reply {
    const asked = isRecord(body) && isRecord(body["one_time_keys"]) ? body["one_time_keys"] : {};
    const claimed: Record<string, Record<string, Record<string, unknown>>> = {};
    for (const [userId, devices] of Object.entries(asked)) {
      if (!isRecord(devices)) continue;
      for (const [deviceId, algorithm] of Object.entries(devices)) {
        const ref = { userId, deviceId };
        const pick = (pool: Map<string, unknown> | undefined, take: boolean): [string, unknown] | undefined => {
          const id = [...(pool?.keys() ?? [])].find((k) => k.startsWith(`${String(algorithm)}:`));
          if (id === undefined || pool === undefined) return undefined;
          const value = pool.get(id);
          if (take) pool.delete(id);
          return [id, value];
        };
        const found = pick(this.#oneTimeKeys.get(key(ref)), true) ?? pick(this.#fallbackKeys.get(key(ref)), false);
        if (found === undefined) continue;
        claimed[userId] = { ...(claimed[userId] ?? {}), [deviceId]: { [found[0]]: found[1] } };
      }
    }
    return okReply({ one_time_keys: claimed, failures: {} });
  }

  /** `PUT /sendToDevice/{type}/{txnId}` from `sender`: each message queued for its device (`*`: every device of the user). */
  sendToDevice(sender: string, type: string, body: unknown): Reply {
    const messages = isRecord(body) && isRecord(body["messages"]) ? body["messages"] : null;
    if (messages === null) return errorReply(400, "M_BAD_JSON", "Invalid to-device body");
    for (const [userId, devices] of Object.entries(messages)) {
      if (!isRecord(devices)) continue;
      for (const [deviceId, content] of Object.entries(devices)) {
        const targets = deviceId === "*" ? [...(this.#deviceKeys.get(userId)?.keys() ?? [])] : [deviceId];
        for (const target of targets) {
          const ref = key({ userId, deviceId: target });
          this.#queues.set(ref, [...(this.#queues.get(ref) ?? []), { type, sender, content }]);
        }
      }
    }
    this.#wake();
    return okReply({});
  }

  /** Whether `device` takes part in encryption (uploaded keys or was sent a message): only then does its `/sync` carry a device part. */
  knows(device: DeviceRef): boolean {
    return this.#deviceKeys.get(device.userId)?.has(device.deviceId) === true || this.#queues.has(key(device));
  }

  /** Whether `device` has to-device messages waiting (a long-poll returns for them). */
  hasPending(device: DeviceRef): boolean {
    return (this.#queues.get(key(device))?.length ?? 0) > (this.#delivered.get(key(device)) ?? 0);
  }

  /**
   * The device part of one `/sync` response of `device`: what the previous
   * response delivered is acknowledged now, the rest is delivered (and
   * repeated until the device syncs again). A user whose device keys changed
   * since the device's last response is listed in `device_lists.changed`
   * (every user with keys, to a device's first sync: a superset, as the spec allows).
   */
  syncPart(device: DeviceRef): Record<string, unknown> {
    const ref = key(device);
    const queue = (this.#queues.get(ref) ?? []).slice(this.#delivered.get(ref) ?? 0);
    this.#queues.set(ref, queue);
    this.#delivered.set(ref, queue.length);
    const told = this.#told.get(ref) ?? new Map<string, number>();
    this.#told.set(ref, told);
    const changed = [...this.#versions].filter(([user, version]) => (told.get(user) ?? 0) < version).map(([user, version]) => {
      told.set(user, version);
      return user;
    });
    return {
      to_device: { events: queue },
      device_one_time_keys_count: this.counts(device),
      device_unused_fallback_key_types: [...(this.#fallbackKeys.get(ref)?.keys() ?? [])].map((id) => id.split(":")[0] ?? id),
      device_lists: { changed, left: [] },
    };
  }

  /** The same endpoints for a session. */
  forSession(session: Session): DeviceRef {
    return { userId: session.userId, deviceId: session.deviceId };
  }
}
