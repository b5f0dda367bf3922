// A maintenance lease held as a file, so two processes over one vault
// directory never run maintenance at once. Taking a free lease is an
// exclusive create; taking over an expired one renames it aside first and
// checks that what was moved is the expired lease it read (else it is put
// back and the lease counts as held). The holder re-checks its lease before
// every write it makes under it.
import { randomUUID } from "node:crypto";
import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { memoryErr, memoryOk, type MaintenanceLease, type MemoryResult } from "../ports.ts";

type LeaseBody = { holder: string; token: string; expiresAt: number };

function readLease(path: string): LeaseBody | null | "unreadable" {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (caught) {
    return (caught as NodeJS.ErrnoException).code === "ENOENT" ? null : "unreadable";
  }
  try {
    const parsed = JSON.parse(text) as Partial<LeaseBody>;
    if (typeof parsed.holder === "string" && typeof parsed.token === "string" && typeof parsed.expiresAt === "number") {
      return { holder: parsed.holder, token: parsed.token, expiresAt: parsed.expiresAt };
    }
  } catch {
    // an unparsable lease file is treated as a broken (expired) lease below
  }
  return { holder: "", token: "", expiresAt: 0 };
}

function createExclusive(path: string, body: LeaseBody): boolean {
  try {
    writeFileSync(path, `${JSON.stringify(body)}\n`, { flag: "wx" });
    return true;
  } catch (caught) {
    if ((caught as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw caught;
  }
}

/** Moves an expired lease aside; false when the file moved was not the one judged expired (it is put back). */
function breakExpired(path: string, seen: LeaseBody): boolean {
  const aside = `${path}.${randomUUID()}.stale`;
  try {
    renameSync(path, aside);
  } catch (caught) {
    if ((caught as NodeJS.ErrnoException).code === "ENOENT") return true; // someone else broke it first
    throw caught;
  }
  const moved = readLease(aside);
  const same = moved !== null && moved !== "unreadable" && moved.token === seen.token && moved.expiresAt === seen.expiresAt;
  if (!same) {
    try {
      linkSync(aside, path); // put the live lease back, unless a new one already took the name
    } catch {
      // the live holder will find its lease lost at its next check
    }
  }
  unlinkSync(aside);
  return same;
}

/** Takes the lease at `path` for `ttlMs`, or `memory_lease_held` (retryable) while another holder has it. */
export function acquireFileLease(path: string, name: string, holder: string, ttlMs: number, now: () => number): MemoryResult<MaintenanceLease> {
  const body: LeaseBody = { holder, token: randomUUID(), expiresAt: now() + ttlMs };
  try {
    for (let attempt = 0; attempt < 2; attempt += 1) {
      if (createExclusive(path, body)) return memoryOk(fileLease(path, name, body, now));
      const seen = readLease(path);
      if (seen === "unreadable") return memoryErr("memory_store_failed", true);
      if (seen !== null && seen.expiresAt > now()) return memoryErr("memory_lease_held", true);
      if (seen !== null && !breakExpired(path, seen)) return memoryErr("memory_lease_held", true);
    }
  } catch {
    return memoryErr("memory_store_failed", true);
  }
  return memoryErr("memory_lease_held", true);
}

function fileLease(path: string, name: string, body: LeaseBody, now: () => number): MaintenanceLease {
  const mine = (): boolean => {
    const current = readLease(path);
    return current !== null && current !== "unreadable" && current.token === body.token;
  };
  return {
    name,
    holder: body.holder,
    expiresAt: new Date(body.expiresAt).toISOString(),
    check: async () => (mine() && body.expiresAt > now() ? memoryOk(undefined) : memoryErr("memory_lease_lost")),
    release: async () => {
      if (!mine()) return;
      try {
        unlinkSync(path);
      } catch {
        // already gone: nothing to release
      }
    },
  };
}
