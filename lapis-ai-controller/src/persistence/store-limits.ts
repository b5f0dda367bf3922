// The store's own sections of the config `limits` (`volatile`, `storage`),
// checked against the caps the store enforces again when it opens. Failures
// are `config_invalid` naming the key path, never a value.
import { controllerError, err, ok, type Result } from "../domain/errors.ts";
import { EVENT_TAIL_LIMITS, EVENT_TAIL_MAX_BYTES } from "../domain/event-tail.ts";
import type { Json } from "../domain/records.ts";
import { groupCommitLimits } from "./group-commit.ts";
import { volatileLimits } from "./volatile-payloads.ts";

/** One entry of the config `limits` section, when that section is an object. */
export function limitsEntry(sections: Readonly<Record<string, Json>> | undefined, key: string): Json | undefined {
  const limits = sections?.limits;
  return limits !== null && typeof limits === "object" && !Array.isArray(limits) ? (limits as { readonly [name: string]: Json })[key] : undefined;
}

/** Config `limits.volatile` ({maxEntries, maxChars}), validated against the store's own caps. */
export function volatileSection(sections: Readonly<Record<string, Json>>): Result<Record<string, number> | undefined> {
  const v = limitsEntry(sections, "volatile");
  if (v === undefined) return ok(undefined);
  if (v === null || typeof v !== "object" || Array.isArray(v)) return err(controllerError("config_invalid", { where: "config.limits.volatile" }));
  for (const key of Object.keys(v)) {
    if (key !== "maxEntries" && key !== "maxChars") return err(controllerError("config_invalid", { where: `config.limits.volatile.${key.slice(0, 64)}` }));
  }
  const checked = volatileLimits(v as Record<string, number>);
  if (!checked.ok) return err(controllerError("config_invalid", { where: `config.limits.${checked.error.where ?? "volatile"}` }));
  return ok(v as Record<string, number>);
}

/**
 * The SQLite page cache of the store's connection, in KiB (config
 * `limits.storage.pageCacheKiB`). Serve's turns touch a few dozen pages (the
 * ends of the journal and its indexes, a turn's rows); a page outside the
 * cache is read again from the operating system's cache, while every page the
 * cache holds stays resident. SQLite's own default (2 MiB) filled up over a
 * thousand turns and was most of serve's malloc growth (P-STO-45).
 */
export const PAGE_CACHE_KIB = { default: 256, min: 64, max: 65_536 } as const;

/** `raw` as a page cache size in KiB (the default when undefined), or null when it is not an integer in range. */
export function pageCacheKiB(raw: unknown): number | null {
  const value = raw === undefined ? PAGE_CACHE_KIB.default : raw;
  return typeof value === "number" && Number.isInteger(value) && value >= PAGE_CACHE_KIB.min && value <= PAGE_CACHE_KIB.max ? value : null;
}

/**
 * Config `limits.storage`: {groupCommitMax}: events per group commit, 1..1024,
 * default 64 (1 commits each alone); {eventTailBytes}: the encoded events a
 * watched thread's committed tail may hold (P-PRF-18), 0..16 MiB, default 1
 * MiB (0: none, every page is read from the journal); {pageCacheKiB}: the
 * SQLite page cache of the store's connection, 64 KiB .. 64 MiB, default 256.
 */
export function storageSection(sections: Readonly<Record<string, Json>>): Result<{ groupCommit: { maxBatch?: number }; eventTailBytes: number; pageCacheKiB: number }> {
  const v = limitsEntry(sections, "storage");
  if (v === undefined) return ok({ groupCommit: {}, eventTailBytes: EVENT_TAIL_LIMITS.bytes, pageCacheKiB: PAGE_CACHE_KIB.default });
  if (v === null || typeof v !== "object" || Array.isArray(v)) return err(controllerError("config_invalid", { where: "config.limits.storage" }));
  for (const key of Object.keys(v)) {
    if (key !== "groupCommitMax" && key !== "eventTailBytes" && key !== "pageCacheKiB") return err(controllerError("config_invalid", { where: `config.limits.storage.${key.slice(0, 64)}` }));
  }
  const raw = (v as { groupCommitMax?: Json }).groupCommitMax;
  const checked = groupCommitLimits(raw === undefined ? {} : { maxBatch: raw });
  if (!checked.ok) return err(controllerError("config_invalid", { where: `config.limits.${checked.where}` }));
  const tail = (v as { eventTailBytes?: Json }).eventTailBytes ?? EVENT_TAIL_LIMITS.bytes;
  if (typeof tail !== "number" || !Number.isInteger(tail) || tail < 0 || tail > EVENT_TAIL_MAX_BYTES) {
    return err(controllerError("config_invalid", { where: "config.limits.storage.eventTailBytes" }));
  }
  const cache = pageCacheKiB((v as { pageCacheKiB?: Json }).pageCacheKiB);
  if (cache === null) return err(controllerError("config_invalid", { where: "config.limits.storage.pageCacheKiB" }));
  return ok({ groupCommit: checked.value, eventTailBytes: tail, pageCacheKiB: cache });
}
