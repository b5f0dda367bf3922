// The rules every vault record store applies, whatever keeps the bytes: the
// partition and id grammar, revision arithmetic, and the capped limits.
import { memoryErr, memoryOk, type MemoryResult, type StoredRecord } from "../ports.ts";
import { ID_PATTERN } from "./episode.ts";

/** Partition names: a lower-case letter, then letters, digits or `-` (the vault uses user, workspace, project). */
export const PARTITION_PATTERN = /^[a-z][a-z0-9-]{0,31}$/;

/** The store's limits; each is capped. */
export type StoreLimits = {
  /** Largest stored document, in bytes. */
  readonly maxRecordBytes: number;
  /** Most records one partition may list. */
  readonly maxRecords: number;
  /** Longest maintenance lease. */
  readonly maxLeaseMs: number;
  /** Age after which an identical preimage left by a crashed writer is reused. */
  readonly orphanAfterMs: number;
  /** How long the exclusion-list rewrite lock is held at most. */
  readonly exclusionLockMs: number;
};

export const STORE_LIMIT_DEFAULTS: StoreLimits = { maxRecordBytes: 256 * 1024, maxRecords: 50_000, maxLeaseMs: 10 * 60_000, orphanAfterMs: 60_000, exclusionLockMs: 10_000 };
export const STORE_LIMIT_CAPS: StoreLimits = { maxRecordBytes: 4 * 1024 * 1024, maxRecords: 500_000, maxLeaseMs: 60 * 60_000, orphanAfterMs: 24 * 60 * 60_000, exclusionLockMs: 60_000 };

/** The limits with defaults filled in; a value that is not a positive integer or exceeds its cap throws (a caller bug). */
export function storeLimits(raw: Partial<StoreLimits> = {}): StoreLimits {
  const out: Record<string, number> = {};
  for (const key of Object.keys(STORE_LIMIT_DEFAULTS) as (keyof StoreLimits)[]) {
    const value = raw[key] ?? STORE_LIMIT_DEFAULTS[key];
    if (!Number.isSafeInteger(value) || value < 1 || value > STORE_LIMIT_CAPS[key]) throw new RangeError(`memory store limit ${key} must be an integer in 1..${STORE_LIMIT_CAPS[key]}`);
    out[key] = value;
  }
  return out as StoreLimits;
}

/** UTF-8 byte length, without a runtime-specific buffer type. */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      bytes += 4;
      i += 1;
    } else bytes += 3;
  }
  return bytes;
}

/** Checks a record about to be put: names, size, and that it declares revision `expectedRevision + 1`. */
export function checkRecordShape(record: StoredRecord, expectedRevision: number, limits: StoreLimits, revisionOf: (content: string) => number | null): MemoryResult<void> {
  if (!PARTITION_PATTERN.test(record.partition) || !ID_PATTERN.test(record.id)) return memoryErr("memory_record_invalid");
  if (!Number.isSafeInteger(expectedRevision) || expectedRevision < 0) return memoryErr("memory_record_invalid");
  if (utf8Bytes(record.content) > limits.maxRecordBytes) return memoryErr("memory_limit_exceeded");
  if (record.revision !== expectedRevision + 1 || revisionOf(record.content) !== record.revision) return memoryErr("memory_record_invalid");
  return memoryOk(undefined);
}

/** Checks a lease request: a valid name and a ttl within the cap. */
export function checkLeaseTtl(name: string, ttlMs: number, limits: StoreLimits): MemoryResult<void> {
  if (!ID_PATTERN.test(name)) return memoryErr("memory_record_invalid");
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 1 || ttlMs > limits.maxLeaseMs) return memoryErr("memory_limit_exceeded");
  return memoryOk(undefined);
}
