// `lisa check`, encrypted rooms (only when `e2ee.enabled`): does the crypto
// store open with the configured passphrase, do this device's keys on the
// homeserver equal the ones in the store, and how a member verifies the
// device from Element. The store is opened only when Lisa is not running (it
// needs the instance lock) and never created here; nothing is uploaded.

import { existsSync } from "node:fs";
import type { AppConfig } from "../config/types.ts";
import { silentLogger } from "../log/logger.ts";
import { acquireInstanceLock } from "../state/lock.ts";
import { openCheckSession, type CheckSession } from "./preflight-matrix.ts";
import { failed, passed, timedOutResult, displayUrl, type PreflightResult, type ProbeContext } from "./preflight-result.ts";

const NAME = "e2ee";

interface ServerKeys {
  readonly curve25519?: string;
  readonly ed25519?: string;
  /** The account's cross-signing identity on the server, and whether this device carries its signature. */
  readonly identity: { readonly master: string | null; readonly deviceSigned: boolean };
}

/** An Ed25519 key as Element prints a session key: groups of four characters. */
export function sessionKeyForElement(key: string): string {
  return key.match(/.{1,4}/g)?.join(" ") ?? key;
}

function howToVerify(config: AppConfig, ed25519: string): string {
  return `her session (device) ${config.matrix.device_id} has the session key ${sessionKeyForElement(ed25519)}; ` +
    "Element shares room keys with her and shows her messages without a warning because her own identity signed this device; " +
    "for the green shield, verify her user once in Element (her profile, Verify) and compare the emoji or the key";
}

async function serverKeys(
  config: AppConfig, session: CheckSession, signal: AbortSignal, identityOf: (answer: unknown, user: string, device: string) => ServerKeys["identity"],
): Promise<ServerKeys | string> {
  const login = await session.login(signal);
  if (!login.ok) return login.error.code;
  const { user_id: user, device_id: device } = config.matrix;
  const answer = await session.client.cryptoRequest({ kind: "keys_query", body: { device_keys: { [user]: [device] } } }, signal);
  if (!answer.ok) return answer.error.code;
  const devices = (answer.value as { device_keys?: Record<string, Record<string, { keys?: Record<string, unknown> }>> }).device_keys?.[user];
  const keys = devices?.[device]?.keys ?? {};
  const pick = (name: string): string | undefined => (typeof keys[`${name}:${device}`] === "string" ? keys[`${name}:${device}`] as string : undefined);
  return {
    ...(pick("curve25519") === undefined ? {} : { curve25519: pick("curve25519") }), ...(pick("ed25519") === undefined ? {} : { ed25519: pick("ed25519") }),
    identity: identityOf(answer.value, user, device),
  };
}

/** The e2ee line of `lisa check`. */
export async function probeE2ee(config: AppConfig, context: ProbeContext, session?: CheckSession): Promise<PreflightResult> {
  const passphrase = config.e2ee.store_passphrase;
  if (passphrase === null) return passed(NAME, "encrypted rooms are off");
  const e2ee = await import("../e2ee/index.ts");
  const database = config.runtime.database_path;
  const storePath = e2ee.cryptoStorePathFor(database);
  const own = session ?? openCheckSession(config, context.timeoutMs);
  try {
    const server = await serverKeys(config, own, context.signal, e2ee.serverIdentityOf);
    if (context.timedOut()) return timedOutResult(NAME, `the homeserver at ${displayUrl(config.matrix.homeserver_url)}`, context.timeoutMs);
    if (typeof server === "string") {
      return failed(NAME, server, `could not read device ${config.matrix.device_id}'s keys from the homeserver (${server}); the matrix line says more`);
    }
    if (!existsSync(storePath)) {
      return passed(NAME, `no crypto store yet: Lisa creates ${storePath} at her next start and uploads device ${config.matrix.device_id}'s keys`);
    }
    // Taken after the database probe's own brief look at the lock (it runs first, synchronously).
    const lock = acquireInstanceLock(database);
    if (!lock.ok) {
      const running = lock.error.code === "state_locked";
      if (!running) return failed(NAME, lock.error.code, `cannot take the instance lock of ${database} (${lock.error.code}) to open the crypto store`);
      if (server.ed25519 === undefined) return failed(NAME, "e2ee_keys_not_uploaded", `Lisa is running but the homeserver has no keys for device ${config.matrix.device_id}: see her e2ee_request_failed log lines`);
      const signedWhileRunning = crossSigningVerdict(config, server, undefined, e2ee.XSIGN_CODES);
      if (signedWhileRunning !== null) return signedWhileRunning;
      return passed(NAME, `Lisa is running, so her crypto store was not opened; the homeserver has keys for device ${config.matrix.device_id}, ` +
        `cross-signed by her identity ${server.identity.master ?? ""}; ${howToVerify(config, server.ed25519)}`);
    }
    try {
      const stored = await e2ee.readStoredCrossSigning({
        lock: lock.value, databasePath: database, passphrase, userId: config.matrix.user_id, deviceId: config.matrix.device_id, log: silentLogger,
      });
      if (!stored.ok) return explainStore(stored.error.code, storePath, config);
      if (server.ed25519 === undefined) {
        return failed(NAME, "e2ee_keys_not_uploaded", `the crypto store opens, but the homeserver has no keys for device ${config.matrix.device_id} yet: start Lisa (she uploads them at start) and check again`);
      }
      if (server.ed25519 !== stored.value.keys.ed25519 || server.curve25519 !== stored.value.keys.curve25519) {
        return failed(NAME, "e2ee_keys_mismatch", `the homeserver has other keys for device ${config.matrix.device_id} than Lisa's crypto store ` +
          "(the store was replaced, or another client logged in with this device id): sign that session out in Element (Settings, Sessions) " +
          "and restart Lisa, or give matrix.device_id a new value");
      }
      const identity = crossSigningVerdict(config, server, stored.value.master, e2ee.XSIGN_CODES);
      if (identity !== null) return identity;
      return passed(NAME, `the crypto store opens and device ${config.matrix.device_id}'s keys on the homeserver match it; ` +
        `her cross-signing identity ${server.identity.master ?? ""} on the homeserver equals her store's and signed this device; ${howToVerify(config, stored.value.keys.ed25519)}`);
    } finally {
      lock.value.release();
    }
  } finally {
    if (session === undefined) await own.end();
  }
}

function explainStore(code: string, storePath: string, config: AppConfig): PreflightResult {
  switch (code) {
    case "crypto_store_passphrase_wrong":
      return failed(NAME, code, `e2ee.store_passphrase does not open ${storePath}: set the passphrase it was made with, or move the file aside ` +
        "to start a new device (which cannot read what was sent to the old one)");
    case "crypto_store_account_mismatch":
      return failed(NAME, code, `${storePath} holds another account than ${config.matrix.user_id} on device ${config.matrix.device_id}: ` +
        "restore matrix.user_id and matrix.device_id, or move the file aside to start a new device");
    default:
      return failed(NAME, code, `cannot read ${storePath} (${code}): check its owner and permissions, or restore it from a backup`);
  }
}

type XsignCodes = typeof import("../e2ee/index.ts").XSIGN_CODES;

/**
 * Her cross-signing identity: present on the server, held by her store
 * (`storeMaster`; undefined when the store could not be opened because she
 * runs), and this device signed by it. Null when all hold; else the first
 * mismatch with its fix.
 */
export function crossSigningVerdict(config: AppConfig, server: ServerKeys, storeMaster: string | null | undefined, codes: XsignCodes): PreflightResult | null {
  const { master, deviceSigned } = server.identity;
  const device = config.matrix.device_id;
  if (master === null) {
    return failed(NAME, codes.notOnServer, "her account has no cross-signing identity, so Element withholds room keys from her and hides her messages: " +
      "start Lisa (with e2ee on, her start creates it and signs her device) and check again");
  }
  if (storeMaster === null) {
    return failed(NAME, codes.notInStore, `her account has a cross-signing identity (${master}) that her crypto store lacks (the store was lost, or the identity ` +
      "was made in another client): stop Lisa and run `lisa e2ee restore` with her recovery key or her account's Element recovery key (or set e2ee.recovery_key and start her); " +
      "without a recovery key, `lisa e2ee reset-identity --yes-break-trust` makes a new one and members see her as changed");
  }
  if (storeMaster !== undefined && storeMaster !== master) {
    return failed(NAME, codes.storeDiffers, `her crypto store holds another cross-signing identity (${storeMaster}) than her account's on the homeserver (${master}): ` +
      "stop Lisa and run `lisa e2ee restore` with the recovery key of the account's identity; she never replaces it on her own");
  }
  if (!deviceSigned) {
    return failed(NAME, codes.deviceNotSigned, `device ${device} is not signed by her cross-signing identity, so Element withholds room keys from it: ` +
      "restart Lisa (her start signs it) and check again");
  }
  return null;
}
