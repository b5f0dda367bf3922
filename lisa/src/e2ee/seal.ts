// At-rest encryption of the crypto store file: AES-256-GCM with a random
// 96-bit nonce per value, and a keyed hash (HMAC-SHA-256) to address records
// without keeping their keys in clear. Both keys come from the operator's
// passphrase through scrypt with a random salt stored in the file.

import { createCipheriv, createDecipheriv, createHmac, randomBytes, scryptSync } from "node:crypto";

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** scrypt cost, kept in the file so a later version can raise it for new stores. */
export interface KdfParameters {
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

/** 32 MiB of scrypt work (N=2^15, r=8): a fraction of a second once per start. */
export const DEFAULT_KDF: KdfParameters = { N: 2 ** 15, r: 8, p: 1 };
const MAX_KDF_MEMORY = 256 * 1024 * 1024;

/** Seals and opens values, and names keys, with keys derived from one passphrase. */
export interface Sealer {
  seal(plain: Uint8Array, context: Uint8Array): Buffer;
  /** The plain bytes, or undefined when the value fails authentication (wrong passphrase or tampering). */
  open(sealed: Uint8Array, context: Uint8Array): Buffer | undefined;
  keyId(bytes: Uint8Array): Buffer;
}

export function newSalt(): Buffer {
  return randomBytes(16);
}

export function createSealer(passphrase: string, salt: Uint8Array, kdf: KdfParameters): Sealer {
  const material = scryptSync(passphrase.normalize("NFC"), salt, 64, { ...kdf, maxmem: MAX_KDF_MEMORY });
  const encryptionKey = material.subarray(0, 32);
  const hashKey = material.subarray(32, 64);
  return {
    seal(plain, context) {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv("aes-256-gcm", encryptionKey, nonce);
      cipher.setAAD(context);
      const body = Buffer.concat([cipher.update(plain), cipher.final()]);
      return Buffer.concat([nonce, body, cipher.getAuthTag()]);
    },
    open(sealed, context) {
      if (sealed.byteLength < NONCE_BYTES + TAG_BYTES) return undefined;
      const nonce = sealed.subarray(0, NONCE_BYTES);
      const tag = sealed.subarray(sealed.byteLength - TAG_BYTES);
      const decipher = createDecipheriv("aes-256-gcm", encryptionKey, nonce);
      decipher.setAAD(context);
      decipher.setAuthTag(tag);
      try {
        return Buffer.concat([decipher.update(sealed.subarray(NONCE_BYTES, sealed.byteLength - TAG_BYTES)), decipher.final()]);
      } catch {
        return undefined;
      }
    },
    keyId(bytes) {
      return createHmac("sha256", hashKey).update(bytes).digest();
    },
  };
}
