// V8's memory reducer gives a heap's garbage back once a process goes quiet
// after a burst of work. Under Deno it never ran for serve: idle for 30 s after
// start, serve made no full GC, and after 1,000 turns its V8 heap stayed
// committed at 36 MB with 23 MB live (docs/performance.md, "Deno: serve's idle
// resident set and its growth"). This does that job for serve on either
// runtime: once serve has used almost no CPU for a few checks in a row after
// being busy (start-up counts as busy), one full GC returns the pages. V8's
// `gc` is exposed by `--expose-gc` among serve's V8 flags (v8-flags.ts); no
// code but this calls it.
import process from "node:process";
import type { Json } from "../domain/records.ts";

/** When serve counts as quiet, and how often it looks. */
export type IdleGcLimits = {
  /** How often serve's CPU time is read, in ms. */
  readonly checkMs: number;
  /** Consecutive quiet checks before the collection. */
  readonly quietChecks: number;
  /** At most this much CPU time (ms) in one check's interval counts as quiet. */
  readonly quietCpuMs: number;
};

/** Checks every 500 ms; quiet for two in a row (about 1 s under 1% CPU) collects once. */
export const IDLE_GC_LIMITS: IdleGcLimits = { checkMs: 500, quietChecks: 2, quietCpuMs: 5 };

/** The bounds of config `limits.idleGc`, inclusive. */
export const IDLE_GC_BOUNDS = {
  checkMs: [100, 60_000],
  quietChecks: [1, 120],
  quietCpuMs: [0, 10_000],
} as const satisfies Record<keyof IdleGcLimits, readonly [number, number]>;

/**
 * Config `limits.idleGc` ({enabled, checkMs, quietChecks, quietCpuMs}): the
 * limits, null when `enabled` is false, or the key path that is invalid
 * (an unknown key, a value out of `IDLE_GC_BOUNDS` or not an integer).
 */
export function idleGcSection(entry: Json | undefined): { ok: true; value: IdleGcLimits | null } | { ok: false; where: string } {
  const at = "config.limits.idleGc";
  if (entry === undefined) return { ok: true, value: IDLE_GC_LIMITS };
  if (entry === null || typeof entry !== "object" || Array.isArray(entry)) return { ok: false, where: at };
  const limits: Record<string, number> = { ...IDLE_GC_LIMITS };
  let enabled = true;
  for (const [key, value] of Object.entries(entry)) {
    if (key === "enabled") {
      if (typeof value !== "boolean") return { ok: false, where: `${at}.enabled` };
      enabled = value;
      continue;
    }
    const bounds = (IDLE_GC_BOUNDS as Record<string, readonly [number, number]>)[key];
    if (bounds === undefined || !Object.hasOwn(IDLE_GC_BOUNDS, key)) return { ok: false, where: `${at}.${key.slice(0, 64)}` };
    if (typeof value !== "number" || !Number.isInteger(value) || value < bounds[0] || value > bounds[1]) return { ok: false, where: `${at}.${key}` };
    limits[key] = value;
  }
  return { ok: true, value: enabled ? (limits as IdleGcLimits) : null };
}

/** What the idle collector reads and does (the process, or a test's fake). */
export type IdleGcPorts = {
  /** CPU time the process has used so far, in ms. */
  cpuMs(): number;
  /** One full collection. */
  collect(): void;
  /** Calls `tick` every `ms` without keeping the process alive; returns the stop. */
  every(ms: number, tick: () => void): () => void;
};

/** Starts the idle collector; returns its stop. */
export function startIdleGc(ports: IdleGcPorts, limits: IdleGcLimits = IDLE_GC_LIMITS): () => void {
  let last = ports.cpuMs();
  let quiet = 0;
  // What start-up left behind is the first garbage to give back.
  let busySinceCollect = true;
  return ports.every(limits.checkMs, () => {
    const now = ports.cpuMs();
    const used = now - last;
    last = now;
    if (used > limits.quietCpuMs) {
      quiet = 0;
      busySinceCollect = true;
      return;
    }
    quiet += 1;
    if (!busySinceCollect || quiet < limits.quietChecks) return;
    busySinceCollect = false;
    ports.collect();
    // The collection's own CPU time is not serve being busy.
    last = ports.cpuMs();
  });
}

/** The process's ports, or null when V8's `gc` is not exposed (serve started without its V8 flags). */
export function processIdleGcPorts(): IdleGcPorts | null {
  const gc = (globalThis as { gc?: unknown }).gc;
  if (typeof gc !== "function") return null;
  return {
    cpuMs: () => {
      const usage = process.cpuUsage();
      return (usage.user + usage.system) / 1000;
    },
    // "last-resort": V8's most thorough collection, which also shrinks the young generation and
    // releases pooled pages (a plain major collection left the resident set where it was).
    collect: () => { (gc as (options?: Record<string, string>) => void)({ type: "major", execution: "sync", flavor: "last-resort" }); },
    every: (ms, tick) => {
      const timer = setInterval(tick, ms);
      timer.unref();
      return () => clearInterval(timer);
    },
  };
}
