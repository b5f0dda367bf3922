// Her cross-signing keys from the account's secret storage, for an identity
// someone set up in Element while logged in as her: Element keeps the three
// private keys in account data (`m.cross_signing.master`, `.self_signing`,
// `.user_signing`), each encrypted (AES-256-CTR, HMAC-SHA-256, keys from
// HKDF-SHA-256 over the secret's name) with the default secret storage key,
// whose recovery key the operator holds (base58 of `0x8B 0x01`, the 32-byte
// key and a parity byte, in groups of four). The key is checked against the
// key's description (its MAC of 32 zero bytes) before any secret is read.

import { createCipheriv, createDecipheriv, createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import { err, ok, type Result } from "../errors.ts";
import type { MatrixError } from "../matrix/errors.ts";
import type { CryptoRequestPort } from "../matrix/port.ts";
import { type CrossSigningSeeds, XSIGN_CODES } from "./cross-signing.ts";
import { E2eeError } from "./errors.ts";

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const PREFIX = [0x8b, 0x01];
const KEY_BYTES = 32;
const AES_HMAC = "m.secret_storage.v1.aes-hmac-sha2";
const SECRETS = { master: "m.cross_signing.master", selfSigning: "m.cross_signing.self_signing", userSigning: "m.cross_signing.user_signing" } as const;

function base58Decode(text: string): Buffer | null {
  let value = 0n;
  for (const char of text) {
    const digit = BASE58.indexOf(char);
    if (digit < 0) return null;
    value = value * 58n + BigInt(digit);
  }
  const bytes: number[] = [];
  while (value > 0n) {
    bytes.unshift(Number(value % 256n));
    value /= 256n;
  }
  for (const char of text) {
    if (char !== "1") break;
    bytes.unshift(0);
  }
  return Buffer.from(bytes);
}

/** The 32-byte secret storage key of an Element recovery key, or null when the text is not one. */
export function decodeElementRecoveryKey(text: string): Buffer | null {
  const bytes = base58Decode(text.replace(/\s+/g, ""));
  if (bytes === null || bytes.length !== PREFIX.length + KEY_BYTES + 1) return null;
  if (bytes[0] !== PREFIX[0] || bytes[1] !== PREFIX[1]) return null;
  if (bytes.reduce((parity, byte) => parity ^ byte, 0) !== 0) return null;
  return bytes.subarray(PREFIX.length, PREFIX.length + KEY_BYTES);
}

interface Encrypted {
  readonly iv: string;
  readonly ciphertext?: string;
  readonly mac: string;
}

function keysFor(key: Buffer, name: string): { aes: Buffer; hmac: Buffer } {
  const bits = Buffer.from(hkdfSync("sha256", key, Buffer.alloc(8), Buffer.from(name, "utf8"), 64));
  return { aes: bits.subarray(0, 32), hmac: bits.subarray(32) };
}

function macMatches(hmacKey: Buffer, ciphertext: Buffer, mac: string): boolean {
  const expected = createHmac("sha256", hmacKey).update(ciphertext).digest();
  const given = Buffer.from(mac, "base64");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Whether `key` is the secret storage key its description (`iv`, `mac`) was made with. */
export function keyMatchesDescription(key: Buffer, description: Encrypted): boolean {
  const { aes, hmac } = keysFor(key, "");
  const cipher = createCipheriv("aes-256-ctr", aes, Buffer.from(description.iv, "base64"));
  const zeros = Buffer.concat([cipher.update(Buffer.alloc(32)), cipher.final()]);
  return macMatches(hmac, zeros, description.mac);
}

/** Decrypts one secret; null when its MAC does not verify. */
export function decryptSecret(key: Buffer, name: string, item: Encrypted): string | null {
  const { aes, hmac } = keysFor(key, name);
  const ciphertext = Buffer.from(item.ciphertext ?? "", "base64");
  if (!macMatches(hmac, ciphertext, item.mac)) return null;
  const decipher = createDecipheriv("aes-256-ctr", aes, Buffer.from(item.iv, "base64"));
  return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString("utf8");
}

async function accountData(http: CryptoRequestPort, eventType: string, signal: AbortSignal): Promise<Result<Record<string, unknown> | null, MatrixError>> {
  const answer = await http.cryptoRequest({ kind: "account_data", eventType }, signal);
  if (!answer.ok) return answer.error.code === "matrix_not_found" ? ok(null) : answer;
  const value = answer.value;
  return ok(typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : null);
}

function isEncrypted(value: unknown): value is Encrypted {
  const item = value as Partial<Encrypted> | null;
  return typeof item === "object" && item !== null && typeof item.iv === "string" && typeof item.mac === "string";
}

/** Reads her three private cross-signing keys from the account's secret storage with the storage key `key`. */
export async function readSecretStorageSeeds(
  http: CryptoRequestPort, key: Buffer, signal: AbortSignal,
): Promise<Result<CrossSigningSeeds, E2eeError | MatrixError>> {
  const mismatch = (message: string) => err(new E2eeError(XSIGN_CODES.recoveryKeyMismatch, message));
  const defaultKey = await accountData(http, "m.secret_storage.default_key", signal);
  if (!defaultKey.ok) return defaultKey;
  const keyId = defaultKey.value?.["key"];
  if (typeof keyId !== "string") return mismatch("her account has no secret storage");
  const description = await accountData(http, `m.secret_storage.key.${keyId}`, signal);
  if (!description.ok) return description;
  if (description.value?.["algorithm"] !== AES_HMAC || !isEncrypted(description.value)) return mismatch("her secret storage key is of an unknown kind");
  if (!keyMatchesDescription(key, description.value)) return mismatch("the recovery key is not her account's secret storage key");
  const seeds: Partial<Record<keyof typeof SECRETS, string>> = {};
  for (const [field, name] of Object.entries(SECRETS) as [keyof typeof SECRETS, string][]) {
    const stored = await accountData(http, name, signal);
    if (!stored.ok) return stored;
    const item = (stored.value?.["encrypted"] as Record<string, unknown> | undefined)?.[keyId];
    const plain = isEncrypted(item) ? decryptSecret(key, name, item) : null;
    if (plain === null) return mismatch("her secret storage lacks a cross-signing key, or it does not decrypt");
    seeds[field] = plain;
  }
  const { master, selfSigning, userSigning } = seeds;
  if (master === undefined || selfSigning === undefined || userSigning === undefined) return mismatch("incomplete secret storage");
  return ok({ master, selfSigning, userSigning });
}
