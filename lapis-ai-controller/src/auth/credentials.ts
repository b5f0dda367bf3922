// Secret handling: digests, constant-time comparison, bearer generation.
// Raw secrets never leave this module's callers except as digests.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** SHA-256 digest of a secret, as raw bytes. */
export function digestSecret(secret: string): Uint8Array {
  return new Uint8Array(createHash("sha256").update(secret, "utf8").digest());
}

/** SHA-256 hex of a bearer, the only form stored in the database. */
export function bearerHash(bearer: string): string {
  return createHash("sha256").update(bearer, "utf8").digest("hex");
}

/** Constant-time equality of two equal-length digests. */
export function digestsEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Comparator signature, injectable so tests can spy on it (P-API-01). */
export type DigestComparator = (a: Uint8Array, b: Uint8Array) => boolean;

/** A new session bearer: 32 random bytes, base64url, with a recognizable prefix. */
export function newBearer(): string {
  return `lacb_${randomBytes(32).toString("base64url")}`;
}

/** Minimum bootstrap token length accepted from configuration. */
export const MIN_TOKEN_LENGTH = 16;
/** Maximum accepted credential length in a hello frame. */
export const MAX_CREDENTIAL_LENGTH = 512;
