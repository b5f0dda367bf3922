// Cross-signing endpoints of the fake (LISA-XSIGN): `/keys/device_signing/upload`
// (the first upload goes without auth, a replacement asks for the password by
// user-interactive auth, as Synapse and Continuwuity 26.8 do) and
// `/keys/signatures/upload` (signatures of devices and of master keys merged
// in). The keys are opaque: the fake verifies no signature. The key server
// (keys.ts) serves these keys in `/keys/query`.

import { randomBytes } from "node:crypto";
import type { Accounts, Session } from "./accounts.ts";
import { errorReply, isObject, okReply, type Reply } from "./reply.ts";

type Json = Record<string, unknown>;

/** A user's cross-signing keys as uploaded. */
export interface SigningKeys {
  master?: Json;
  self_signing?: Json;
  user_signing?: Json;
}

const SIGNING_FIELDS = ["master_key", "self_signing_key", "user_signing_key"] as const;
const SIGNING_NAMES = { master_key: "master", self_signing_key: "self_signing", user_signing_key: "user_signing" } as const;

function mergeSignatures(target: Json, source: Json): void {
  const into = (isObject(target["signatures"]) ? target["signatures"] : {}) as Record<string, Json>;
  for (const [user, signatures] of Object.entries(isObject(source["signatures"]) ? source["signatures"] : {})) {
    into[user] = { ...(into[user] ?? {}), ...(isObject(signatures) ? signatures : {}) };
  }
  target["signatures"] = into;
}

/** What the cross-signing endpoints need of the key server. */
export interface DeviceKeyAccess {
  /** The stored device keys of a device (mutable: signatures are merged in), or null. */
  deviceKeys(userId: string, deviceId: string): Json | null;
  /** The user's keys changed: listed in `device_lists.changed` of the next `/sync`. */
  changed(userId: string): void;
}

/** The cross-signing key store and its upload endpoints. */
export class CrossSigningKeys {
  readonly #accounts: Accounts;
  readonly #devices: DeviceKeyAccess;
  readonly #signing = new Map<string, SigningKeys>();
  readonly #uiaSessions = new Set<string>();
  /** Cross-signing uploads seen: with or without `auth`, and their status. */
  readonly uploads: { readonly withAuth: boolean; readonly status: number }[] = [];

  constructor(accounts: Accounts, devices: DeviceKeyAccess) {
    this.#accounts = accounts;
    this.#devices = devices;
  }

  /** The user's cross-signing keys, if any were uploaded. */
  of(userId: string): SigningKeys | undefined {
    return this.#signing.get(userId);
  }

  /** `POST /keys/device_signing/upload`: the first without auth; a replacement asks for the password. */
  upload(session: Session, body: unknown): Reply {
    const request = isObject(body) ? body : {};
    const existing = this.#signing.get(session.userId);
    const auth = isObject(request["auth"]) ? request["auth"] : null;
    const record = (status: number): void => void this.uploads.push({ withAuth: auth !== null, status });
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
    this.#devices.changed(session.userId);
    record(200);
    return okReply({});
  }

  /** `POST /keys/signatures/upload`: signatures of devices and of master keys merged in. */
  signaturesUpload(body: unknown): Reply {
    for (const [userId, objects] of Object.entries(isObject(body) ? body : {})) {
      for (const [keyId, signed] of Object.entries(isObject(objects) ? objects : {})) {
        if (!isObject(signed)) continue;
        const device = this.#devices.deviceKeys(userId, keyId);
        const master = this.#signing.get(userId)?.master;
        const masterId = master === undefined ? undefined : Object.values(isObject(master["keys"]) ? master["keys"] : {})[0];
        if (device !== null) mergeSignatures(device, signed);
        else if (master !== undefined && masterId === keyId) mergeSignatures(master, signed);
        else continue;
        this.#devices.changed(userId);
      }
    }
    return okReply({ failures: {} });
  }
}
