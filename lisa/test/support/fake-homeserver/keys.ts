// End-to-end encryption key endpoints as Continuwuity 26.8 answers them
// (measured against a build from source, which the project's CI cannot
// reach): device and one-time key upload (a one-time key it cannot parse is
// dropped silently, still 200), key query, claim (when the one-time keys
// have run out, the fallback key), cross-signing key upload (the first needs
// no auth, a replacement asks for the password by user-interactive auth)
// and signature upload. `/sync` leaves `device_one_time_keys_count` out when
// the pool is empty (sync.ts asks `oneTimeKeyCount`), and a change of the
// count does not wake a waiting `/sync` (nothing here notifies it).

import { randomBytes } from "node:crypto";
import type { Accounts, Session } from "./accounts.ts";
import { errorReply, isObject, okReply, type Reply } from "./reply.ts";

type Json = Record<string, unknown>;

interface DeviceKeys {
  keys: Json | null;
  readonly oneTime: Map<string, Json>;
  readonly fallback: Map<string, Json>;
}

interface SigningKeys {
  master?: Json;
  self_signing?: Json;
  user_signing?: Json;
}

const SIGNING_FIELDS = ["master_key", "self_signing_key", "user_signing_key"] as const;
const SIGNING_NAMES = { master_key: "master", self_signing_key: "self_signing", user_signing_key: "user_signing" } as const;

/** A one-time or fallback key Continuwuity can parse: an object with a `key` string. */
function parsableKey(value: unknown): value is Json {
  return isObject(value) && typeof value["key"] === "string";
}

function mergeSignatures(target: Json, source: Json): void {
  const into = (isObject(target["signatures"]) ? target["signatures"] : {}) as Record<string, Json>;
  for (const [user, signatures] of Object.entries(isObject(source["signatures"]) ? source["signatures"] : {})) {
    into[user] = { ...(into[user] ?? {}), ...(isObject(signatures) ? signatures : {}) };
  }
  target["signatures"] = into;
}

/** The key endpoints of one fake homeserver. */
export class KeyEndpoints {
  readonly #accounts: Accounts;
  readonly #devices = new Map<string, Map<string, DeviceKeys>>();
  readonly #signing = new Map<string, SigningKeys>();
  readonly #uiaSessions = new Set<string>();
  /** Cross-signing uploads seen: with or without `auth`, and their status. */
  readonly signingUploads: { readonly withAuth: boolean; readonly status: number }[] = [];

  constructor(accounts: Accounts) {
    this.#accounts = accounts;
  }

  #device(userId: string, deviceId: string): DeviceKeys {
    let devices = this.#devices.get(userId);
    if (devices === undefined) this.#devices.set(userId, (devices = new Map()));
    let device = devices.get(deviceId);
    if (device === undefined) devices.set(deviceId, (device = { keys: null, oneTime: new Map(), fallback: new Map() }));
    return device;
  }

  /** Unclaimed signed_curve25519 one-time keys of a device. */
  oneTimeKeyCount(userId: string, deviceId: string): number {
    return [...(this.#devices.get(userId)?.get(deviceId)?.oneTime.keys() ?? [])].filter((id) => id.startsWith("signed_curve25519:")).length;
  }

  /** Algorithms of the device's fallback keys not claimed yet (`device_unused_fallback_key_types`). */
  unusedFallbackTypes(userId: string, deviceId: string): string[] {
    return [...(this.#devices.get(userId)?.get(deviceId)?.fallback ?? [])].filter(([, key]) => key["used"] !== true).map(([algorithm]) => algorithm);
  }

  /** `POST /keys/upload`. */
  upload(session: Session, body: unknown): Reply {
    const request = isObject(body) ? body : {};
    const device = this.#device(session.userId, session.deviceId);
    if (isObject(request["device_keys"])) device.keys = { ...request["device_keys"] };
    for (const [id, value] of Object.entries(isObject(request["one_time_keys"]) ? request["one_time_keys"] : {})) {
      if (parsableKey(value)) device.oneTime.set(id, value);
    }
    for (const [id, value] of Object.entries(isObject(request["fallback_keys"]) ? request["fallback_keys"] : {})) {
      if (parsableKey(value)) device.fallback.set(id.split(":")[0] ?? id, { ...value, id });
    }
    return okReply({ one_time_key_counts: { signed_curve25519: this.oneTimeKeyCount(session.userId, session.deviceId) } });
  }

  /** `POST /keys/query`. */
  query(session: Session, body: unknown): Reply {
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
      const signing = this.#signing.get(userId);
      if (signing?.master !== undefined) masters[userId] = signing.master;
      if (signing?.self_signing !== undefined) selfSigning[userId] = signing.self_signing;
      if (signing?.user_signing !== undefined && userId === session.userId) userSigning[userId] = signing.user_signing;
    }
    return okReply({ device_keys: deviceKeys, master_keys: masters, self_signing_keys: selfSigning, user_signing_keys: userSigning, failures: {} });
  }

  /** `POST /keys/claim`: a one-time key, or the fallback key once they have run out. */
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

  /** `POST /keys/device_signing/upload`: the first without auth; a replacement asks for the password. */
  signingUpload(session: Session, body: unknown): Reply {
    const request = isObject(body) ? body : {};
    const existing = this.#signing.get(session.userId);
    const auth = isObject(request["auth"]) ? request["auth"] : null;
    const record = (status: number): void => void this.signingUploads.push({ withAuth: auth !== null, status });
    if (existing?.master !== undefined) {
      const session_ = typeof auth?.["session"] === "string" ? auth["session"] : null;
      const password = typeof auth?.["password"] === "string" ? auth["password"] : null;
      const known = session_ !== null && this.#uiaSessions.has(session_);
      if (auth === null || !known || password === null || !this.#accounts.passwordMatches(session.userId, password)) {
        const id = session_ !== null && known ? session_ : randomBytes(12).toString("hex");
        this.#uiaSessions.add(id);
        record(401);
        const failed = auth === null ? {} : { errcode: "M_FORBIDDEN", error: "Invalid password" };
        return { status: 401, body: { ...failed, flows: [{ stages: ["m.login.password"] }], params: {}, session: id } };
      }
      if (session_ !== null) this.#uiaSessions.delete(session_);
    }
    const signing: SigningKeys = { ...existing };
    for (const field of SIGNING_FIELDS) {
      if (isObject(request[field])) signing[SIGNING_NAMES[field]] = { ...request[field] };
    }
    if (signing.master === undefined) {
      record(400);
      return errorReply(400, "M_MISSING_PARAM", "master key required");
    }
    this.#signing.set(session.userId, signing);
    record(200);
    return okReply({});
  }

  /** `POST /keys/signatures/upload`: signatures of devices and of master keys merged in. */
  signaturesUpload(body: unknown): Reply {
    for (const [userId, objects] of Object.entries(isObject(body) ? body : {})) {
      for (const [keyId, signed] of Object.entries(isObject(objects) ? objects : {})) {
        if (!isObject(signed)) continue;
        const device = this.#devices.get(userId)?.get(keyId)?.keys;
        const master = this.#signing.get(userId)?.master;
        const masterId = master === undefined ? undefined : Object.values(isObject(master["keys"]) ? master["keys"] : {})[0];
        if (device !== null && device !== undefined) mergeSignatures(device, signed);
        else if (master !== undefined && masterId === keyId) mergeSignatures(master, signed);
      }
    }
    return okReply({ failures: {} });
  }
}
