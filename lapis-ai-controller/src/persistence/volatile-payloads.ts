// Volatile payload capture for metadata-only retention (P-STO-09, P-STO-14):
// payloads live in this process's memory only, keyed by thread and transcript
// sequence. A restart, or eviction past the limits, loses them; replay then
// reports the loss instead of inventing history (P-STO-15).

import { controllerError, err, ok, type Result } from "../domain/errors.ts";
import type { Json } from "../domain/records.ts";

/** Limits of volatile capture; each is validated and capped in code. */
export interface VolatileLimits {
  /** Most payloads held at once (default 10,000, ceiling 1,000,000). */
  readonly maxEntries: number;
  /** Most UTF-16 code units of serialized payload held at once (default 64 Mi, ceiling 1 Gi). */
  readonly maxChars: number;
}

/** The default volatile limits. */
export const VOLATILE_DEFAULTS: VolatileLimits = { maxEntries: 10_000, maxChars: 64 * 1024 * 1024 };
const VOLATILE_CEILINGS: VolatileLimits = { maxEntries: 1_000_000, maxChars: 1024 * 1024 * 1024 };

/** Validates volatile limits: positive integers at or under their ceilings. */
export function volatileLimits(input: Partial<VolatileLimits> = {}): Result<VolatileLimits> {
  const out = { ...VOLATILE_DEFAULTS, ...input };
  for (const key of ["maxEntries", "maxChars"] as const) {
    const value = out[key];
    if (!Number.isInteger(value) || value < 1 || value > VOLATILE_CEILINGS[key]) {
      return err(controllerError("config_invalid", { where: `volatile.${key}` }));
    }
  }
  return ok(out);
}

interface Entry {
  readonly payload: Json;
  readonly size: number;
}

/** In-memory payloads of metadata-only transcript rows; oldest evicted first when a limit is reached. */
export class VolatilePayloads {
  readonly #limits: VolatileLimits;
  readonly #entries = new Map<string, Entry>();
  #chars = 0;

  constructor(limits: VolatileLimits = VOLATILE_DEFAULTS) {
    this.#limits = limits;
  }

  /** Holds the payload of transcript row `seq` of `threadId`. */
  put(threadId: string, seq: number, payload: Json): void {
    const key = `${threadId}\u0000${seq}`;
    this.#remove(key);
    const size = JSON.stringify(payload).length;
    this.#entries.set(key, { payload, size });
    this.#chars += size;
    for (const [oldest, entry] of this.#entries) {
      if (this.#entries.size <= this.#limits.maxEntries && this.#chars <= this.#limits.maxChars) break;
      this.#entries.delete(oldest);
      this.#chars -= entry.size;
    }
  }

  /** The payload of row `seq` of `threadId`, or undefined once lost. */
  get(threadId: string, seq: number): Json | undefined {
    return this.#entries.get(`${threadId}\u0000${seq}`)?.payload;
  }

  /** How many payloads are held. */
  get size(): number {
    return this.#entries.size;
  }

  /** Drops every payload of one thread (its deletion). */
  dropThread(threadId: string): void {
    const prefix = `${threadId}\u0000`;
    for (const key of [...this.#entries.keys()]) if (key.startsWith(prefix)) this.#remove(key);
  }

  /** Drops everything (as a restart would). */
  clear(): void {
    this.#entries.clear();
    this.#chars = 0;
  }

  #remove(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#chars -= entry.size;
  }
}
