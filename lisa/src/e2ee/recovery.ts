// Lisa's recovery key: her three private cross-signing seeds in one line the
// operator can store in a password manager, and read back after her crypto
// store is lost. Format: base64url of a version tag, the three 32-byte seeds
// and the first four bytes of their SHA-256, in groups of four characters
// (spaces and line breaks are ignored when it is read). It is a secret: it is
// printed only by `lisa e2ee export-recovery` and read only from an `env:`
// reference or stdin.

import { createHash } from "node:crypto";
import { err, ok, type Result } from "../errors.ts";
import type { MatrixError } from "../matrix/errors.ts";
import type { CryptoRequestPort } from "../matrix/port.ts";
import type { CrossSigningSeeds } from "./cross-signing.ts";
import { XSIGN_CODES } from "./cross-signing.ts";
import { E2eeError } from "./errors.ts";
import { decodeElementRecoveryKey, readSecretStorageSeeds } from "./secret-storage.ts";

const TAG = Buffer.from([0x4c, 0x58, 0x01]);
const SEED_BYTES = 32;
const CHECK_BYTES = 4;
const TOTAL = TAG.length + 3 * SEED_BYTES + CHECK_BYTES;

function checksum(payload: Buffer): Buffer {
  return createHash("sha256").update(payload).digest().subarray(0, CHECK_BYTES);
}

function seedBytes(seed: string): Buffer {
  const bytes = Buffer.from(seed, "base64");
  if (bytes.length !== SEED_BYTES) throw new Error("a cross-signing seed is not 32 bytes");
  return bytes;
}

/** The recovery key of `seeds`. */
export function encodeRecoveryKey(seeds: CrossSigningSeeds): string {
  const payload = Buffer.concat([TAG, seedBytes(seeds.master), seedBytes(seeds.selfSigning), seedBytes(seeds.userSigning)]);
  const text = Buffer.concat([payload, checksum(payload)]).toString("base64url");
  return text.match(/.{1,4}/g)?.join(" ") ?? text;
}

/** The seeds of a recovery key; `e2ee_recovery_key_invalid` for anything else (the message never repeats the input). */
export function decodeRecoveryKey(text: string): Result<CrossSigningSeeds, E2eeError> {
  const invalid = (): Result<CrossSigningSeeds, E2eeError> =>
    err(new E2eeError(XSIGN_CODES.recoveryKeyInvalid, "this is not a recovery key written by `lisa e2ee export-recovery`"));
  const compact = text.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9_-]+$/.test(compact)) return invalid();
  const bytes = Buffer.from(compact, "base64url");
  if (bytes.length !== TOTAL || !bytes.subarray(0, TAG.length).equals(TAG)) return invalid();
  const payload = bytes.subarray(0, TOTAL - CHECK_BYTES);
  if (!checksum(payload).equals(bytes.subarray(TOTAL - CHECK_BYTES))) return invalid();
  const seed = (index: number): string =>
    payload.subarray(TAG.length + index * SEED_BYTES, TAG.length + (index + 1) * SEED_BYTES).toString("base64").replace(/=+$/, "");
  return ok({ master: seed(0), selfSigning: seed(1), userSigning: seed(2) });
}

/** Loads the seeds a recovery key stands for, when they are needed (it may read the account's secret storage). */
export type SeedLoader = (signal: AbortSignal) => Promise<Result<CrossSigningSeeds, E2eeError | MatrixError>>;

/**
 * The seeds of either kind of recovery key: Lisa's own (the seeds in it), or
 * the account's Element recovery key (the seeds read from its secret storage).
 */
export function recoverySeeds(text: string, http: CryptoRequestPort): SeedLoader {
  return async (signal) => {
    const own = decodeRecoveryKey(text);
    if (own.ok) return own;
    const storageKey = decodeElementRecoveryKey(text);
    return storageKey === null ? own : readSecretStorageSeeds(http, storageKey, signal);
  };
}
