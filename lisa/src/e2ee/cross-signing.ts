// Lisa's own identity: her account's cross-signing keys (master,
// self-signing, user-signing), kept private in the sealed crypto store, their
// public halves on the homeserver, and her device signed by the self-signing
// key, so clients that exclude devices their owner has not signed (Element
// since 2026) share room keys with her and show her messages.
//
// The road, as measured against Synapse and Dendrite: a new identity is
// `bootstrapCrossSigning(true)`, its keys uploaded with password auth, then
// the signatures; an identity restored from a recovery key is imported only
// after her own keys were queried (an earlier import silently does nothing),
// then her device is signed and that signature uploaded
// (`bootstrapCrossSigning(false)` on imported keys makes an upload servers
// refuse). An identity the server already has is never replaced here; only
// `resetIdentity`, which the operator asks for with a confirmation flag.

import { createPrivateKey, createPublicKey } from "node:crypto";
import * as sdk from "@matrix-org/matrix-sdk-crypto-wasm";
import { err, ok, type Result } from "../errors.ts";
import type { MatrixError } from "../matrix/errors.ts";
import type { CryptoRequestPort } from "../matrix/port.ts";
import { E2eeError } from "./errors.ts";
import { sendOutgoing } from "./outgoing.ts";

/** Stable codes of her identity's states and failures; each has its fix in `lisa check` and docs/operations.md. */
export const XSIGN_CODES = {
  /** The account has a cross-signing identity whose private keys her crypto store lacks. */
  notInStore: "e2ee_identity_not_in_store",
  /** The private keys in her store belong to another identity than the account's on the server. */
  storeDiffers: "e2ee_identity_mismatch",
  /** The account has no cross-signing identity on the server (yet). */
  notOnServer: "e2ee_identity_missing",
  /** Her device is not signed by the account's self-signing key. */
  deviceNotSigned: "e2ee_device_not_cross_signed",
  /** The recovery key is not one `lisa e2ee export-recovery` wrote (typo, truncated). */
  recoveryKeyInvalid: "e2ee_recovery_key_invalid",
  /** The recovery key's keys are not the account's identity on the server. */
  recoveryKeyMismatch: "e2ee_recovery_key_mismatch",
} as const;

/** The three private seeds of an identity (unpadded base64), as the crypto library exports and imports them. */
export interface CrossSigningSeeds {
  readonly master: string;
  readonly selfSigning: string;
  readonly userSigning: string;
}

/** The account's identity as the server shows it, and whether her device carries its signature. */
export interface ServerIdentity {
  readonly master: string | null;
  readonly selfSigning: string | null;
  readonly deviceSigned: boolean;
}

/** Her identity in the store against the server's. */
export interface IdentityStatus {
  readonly server: ServerIdentity;
  /** The store holds all three private keys. */
  readonly storeComplete: boolean;
  /** The public master key of the store's private one, or null without one. */
  readonly storeMaster: string | null;
}

/** What `ensureIdentity` did at a start. */
export type IdentityOutcome =
  | { readonly kind: "present" | "created" | "restored" | "device_signed"; readonly master: string }
  | { readonly kind: "not_in_store" | "mismatch"; readonly master: string };

export interface IdentityDeps {
  readonly machine: sdk.OlmMachine;
  readonly http: CryptoRequestPort;
  readonly userId: string;
  readonly deviceId: string;
  readonly deadlineMs: number;
}

// An Ed25519 PKCS#8 prefix: the 32-byte seed follows.
const PKCS8_ED25519 = Buffer.from("302e020100300506032b657004220420", "hex");

/** The public Ed25519 key (unpadded base64) of a private seed (base64). */
export function publicKeyOfSeed(seed: string): string {
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, Buffer.from(seed, "base64")]), format: "der", type: "pkcs8" });
  return createPublicKey(key).export({ format: "der", type: "spki" }).subarray(-32).toString("base64").replace(/=+$/, "");
}

function firstKey(section: unknown, userId: string): string | null {
  const keys = (section as Record<string, { keys?: Record<string, unknown> }> | undefined)?.[userId]?.keys;
  const value = keys === undefined ? undefined : Object.values(keys)[0];
  return typeof value === "string" ? value : null;
}

/** Reads her identity from a `/keys/query` answer. */
export function serverIdentityOf(answer: unknown, userId: string, deviceId: string): ServerIdentity {
  const body = (answer ?? {}) as { master_keys?: unknown; self_signing_keys?: unknown; device_keys?: unknown };
  const master = firstKey(body.master_keys, userId);
  const selfSigning = firstKey(body.self_signing_keys, userId);
  const device = (body.device_keys as Record<string, Record<string, { signatures?: Record<string, Record<string, unknown>> }>> | undefined)?.[userId]?.[deviceId];
  const deviceSigned = selfSigning !== null && typeof device?.signatures?.[userId]?.[`ed25519:${selfSigning}`] === "string";
  return { master, selfSigning, deviceSigned };
}

function signal(deps: IdentityDeps, outer: AbortSignal): AbortSignal {
  return AbortSignal.any([outer, AbortSignal.timeout(deps.deadlineMs)]);
}

/** Queries her own keys (the machine learns them too) and returns the server's view of her identity. */
export async function queryOwnIdentity(deps: IdentityDeps, outer: AbortSignal): Promise<Result<ServerIdentity, MatrixError>> {
  const request = deps.machine.queryKeysForUsers([new sdk.UserId(deps.userId)]);
  const answer = await deps.http.cryptoRequest({ kind: "keys_query", body: JSON.parse(request.body) as unknown }, signal(deps, outer));
  if (!answer.ok) return answer;
  await deps.machine.markRequestAsSent(request.id, request.type, JSON.stringify(answer.value ?? {}));
  return ok(serverIdentityOf(answer.value, deps.userId, deps.deviceId));
}

/** The private seeds in her store, or null unless all three are there. */
export async function exportSeeds(machine: sdk.OlmMachine): Promise<CrossSigningSeeds | null> {
  const exported = await machine.exportCrossSigningKeys();
  if (exported === undefined) return null;
  const { masterKey: master, self_signing_key: selfSigning, userSigningKey: userSigning } = exported;
  if (master === undefined || selfSigning === undefined || userSigning === undefined) return null;
  return { master, selfSigning, userSigning };
}

/** Her identity in the store against the server's (queries her own keys). */
export async function identityStatus(deps: IdentityDeps, outer: AbortSignal): Promise<Result<IdentityStatus, MatrixError>> {
  const server = await queryOwnIdentity(deps, outer);
  if (!server.ok) return server;
  const seeds = await exportSeeds(deps.machine);
  const status = await deps.machine.crossSigningStatus();
  const storeMaster = seeds === null ? null : publicKeyOfSeed(seeds.master);
  return ok({ server: server.value, storeComplete: status.hasMaster && status.hasSelfSigning && status.hasUserSigning, storeMaster });
}

/** Uploads a fresh identity (`bootstrapCrossSigning(true)`): device keys if due, then the signing keys with password auth, then the signatures. */
async function createIdentity(deps: IdentityDeps, outer: AbortSignal): Promise<Result<string, MatrixError>> {
  const requests = await deps.machine.bootstrapCrossSigning(true);
  const first = requests.uploadKeysRequest as sdk.KeysUploadRequest | undefined;
  if (first !== undefined) {
    const sent = await sendOutgoing(deps.machine, deps.http, [first], deps.deadlineMs, outer);
    if (!sent.ok) return sent;
  }
  const body = JSON.parse(requests.uploadSigningKeysRequest.body) as Record<string, unknown>;
  const keys = await deps.http.cryptoRequest({ kind: "signing_keys_upload", body }, signal(deps, outer));
  if (!keys.ok) return keys;
  const signatures = await sendOutgoing(deps.machine, deps.http, [requests.uploadSignaturesRequest], deps.deadlineMs, outer);
  if (!signatures.ok) return signatures;
  const seeds = await exportSeeds(deps.machine);
  if (seeds === null) throw new Error("the crypto library made an identity without its private keys");
  return ok(publicKeyOfSeed(seeds.master));
}

/** Signs her device with the self-signing key in the store and uploads the signature. */
export async function signOwnDevice(deps: IdentityDeps, outer: AbortSignal): Promise<Result<void, MatrixError>> {
  const device = await deps.machine.getDevice(new sdk.UserId(deps.userId), new sdk.DeviceId(deps.deviceId));
  if (device === undefined) throw new Error("her own device is unknown to her crypto machine");
  const upload = await device.verify();
  const sent = await sendOutgoing(deps.machine, deps.http, [upload], deps.deadlineMs, outer);
  return sent.ok ? ok(undefined) : sent;
}

/**
 * Imports an identity's private keys after her own keys were queried, and
 * signs her device with it. Keys that are not the server's identity are
 * refused before the import (`e2ee_recovery_key_mismatch`).
 */
export async function restoreIdentity(deps: IdentityDeps, seeds: CrossSigningSeeds, outer: AbortSignal): Promise<Result<string, MatrixError | E2eeError>> {
  const server = await queryOwnIdentity(deps, outer);
  if (!server.ok) return server;
  const master = publicKeyOfSeed(seeds.master);
  if (server.value.master !== master) {
    return err(new E2eeError(XSIGN_CODES.recoveryKeyMismatch, "the recovery key holds another identity than the account's on the homeserver"));
  }
  try {
    const status = await deps.machine.importCrossSigningKeys(seeds.master, seeds.selfSigning, seeds.userSigning);
    if (!status.hasMaster || !status.hasSelfSigning) {
      return err(new E2eeError(XSIGN_CODES.recoveryKeyMismatch, "the crypto library did not take the recovery key's keys"));
    }
  } catch (cause) {
    return err(new E2eeError(XSIGN_CODES.recoveryKeyMismatch, "the recovery key's keys do not match the account's identity", { cause }));
  }
  const signed = await signOwnDevice(deps, outer);
  return signed.ok ? ok(master) : signed;
}

/** Makes a new identity even though the account has one: breaks every member's trust in her; only by the operator's explicit command. */
export function resetIdentity(deps: IdentityDeps, outer: AbortSignal): Promise<Result<string, MatrixError>> {
  return createIdentity(deps, outer);
}

/**
 * At each start: creates her identity when the account has none; with the
 * store's identity equal to the server's, signs her device if it is not yet;
 * with an identity the store lacks, restores it from `recovery` when given,
 * else reports it (never replaces it).
 */
export async function ensureIdentity(
  deps: IdentityDeps, recovery: ((signal: AbortSignal) => Promise<Result<CrossSigningSeeds, MatrixError | E2eeError>>) | null, outer: AbortSignal,
): Promise<Result<IdentityOutcome, MatrixError | E2eeError>> {
  const status = await identityStatus(deps, outer);
  if (!status.ok) return status;
  const { server, storeMaster, storeComplete } = status.value;
  if (server.master === null) {
    const created = await createIdentity(deps, outer);
    return created.ok ? ok({ kind: "created", master: created.value }) : created;
  }
  if (storeComplete && storeMaster === server.master) {
    if (server.deviceSigned) return ok({ kind: "present", master: server.master });
    const signed = await signOwnDevice(deps, outer);
    return signed.ok ? ok({ kind: "device_signed", master: server.master }) : signed;
  }
  if (recovery !== null) {
    const seeds = await recovery(outer);
    if (!seeds.ok) return seeds;
    const restored = await restoreIdentity(deps, seeds.value, outer);
    return restored.ok ? ok({ kind: "restored", master: restored.value }) : restored;
  }
  return ok({ kind: storeMaster === null ? "not_in_store" : "mismatch", master: server.master });
}
