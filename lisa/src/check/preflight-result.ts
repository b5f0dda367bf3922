// Shared pieces of `lisa check`'s probes: the result shape, per-probe
// deadlines, and text hygiene for anything a remote server said.

/** The outcome of one `lisa check` probe; `fix` tells the operator what to change. Never holds a secret. */
export interface PreflightResult {
  /** Which service was probed: `matrix`, `llm`, `search`, `pandoc` or `database`. */
  readonly name: string;
  readonly ok: boolean;
  /** Stable snake_case failure code (failures only). */
  readonly code?: string;
  /** One operator-facing sentence saying what is wrong and what to change (failures only). */
  readonly fix?: string;
  /** Extra facts (versions, identities, notes). */
  readonly detail?: string;
}

/** What a probe gets: its signal (parent abort or own deadline) and how to tell the deadline fired. */
export interface ProbeContext {
  readonly signal: AbortSignal;
  /** The probe's whole budget, in milliseconds. */
  readonly timeoutMs: number;
  /** True once the probe's own deadline (not the caller) aborted `signal`. */
  timedOut(): boolean;
}

/** A passed probe. */
export function passed(name: string, detail?: string): PreflightResult {
  return detail === undefined ? { name, ok: true } : { name, ok: true, detail };
}

/** A failed probe with its stable code and the operator's fix. */
export function failed(name: string, code: string, fix: string, detail?: string): PreflightResult {
  return detail === undefined ? { name, ok: false, code, fix } : { name, ok: false, code, fix, detail };
}

/** A probe whose service did not answer within its deadline. */
export function timedOutResult(name: string, target: string, timeoutMs: number): PreflightResult {
  return failed(name, `${name}_timeout`, `${target} did not answer within ${seconds(timeoutMs)}: check that it is up and reachable from this host`);
}

/** `12 s` / `0.5 s` for a duration in milliseconds. */
export function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

/** Runs `probe` with a deadline of `timeoutMs` layered on `parent`; the timer never outlives the probe. */
export async function withDeadline<T>(timeoutMs: number, parent: AbortSignal | undefined, probe: (context: ProbeContext) => Promise<T>): Promise<T> {
  const own = new AbortController();
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    own.abort(new DOMException("preflight deadline", "TimeoutError"));
  }, timeoutMs);
  const signal = parent === undefined ? own.signal : AbortSignal.any([parent, own.signal]);
  try {
    return await probe({ signal, timeoutMs, timedOut: () => expired });
  } finally {
    clearTimeout(timer);
  }
}

// Control and format characters could rewrite the operator's terminal.
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}]/gu;

/** A server-supplied string made safe to print: no control characters, at most `max` characters. */
export function printable(text: string, max = 80): string {
  const clean = text.replace(UNPRINTABLE, "?");
  const chars = [...clean];
  return chars.length <= max ? clean : `${chars.slice(0, max - 1).join("")}…`;
}

/** A configured URL without query or fragment (they may carry credentials): origin plus path. */
export function displayUrl(url: string | URL): string {
  try {
    const parsed = typeof url === "string" ? new URL(url) : url;
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return "the configured URL";
  }
}
