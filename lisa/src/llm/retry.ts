// Retry timing for transient LLM failures: jittered exponential backoff, or
// the server's Retry-After, never waiting past the invocation deadline.

/** How transient failures are retried; every field has a safe default. */
export interface RetryPolicy {
  /** Most attempts per completion, the first included. */
  readonly maxAttempts: number;
  /** Backoff before the second attempt (doubled each time, then jittered). */
  readonly baseDelayMs: number;
  /** Largest backoff delay. */
  readonly maxDelayMs: number;
  /** Largest Retry-After Lisa will honour; longer requests give up at once. */
  readonly maxRetryAfterMs: number;
}

/** Default retry policy: 4 attempts, 0.5 s doubling to at most 8 s, Retry-After up to 120 s. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 120_000,
};

// Hard ceilings whatever a caller passes.
const CEILING: RetryPolicy = { maxAttempts: 10, baseDelayMs: 60_000, maxDelayMs: 120_000, maxRetryAfterMs: 600_000 };

/** Merges overrides into the default policy, clamped to the hard ceilings. */
export function retryPolicy(overrides: Partial<RetryPolicy> = {}): RetryPolicy {
  const merged = { ...DEFAULT_RETRY_POLICY, ...overrides };
  return {
    maxAttempts: clamp(Math.floor(merged.maxAttempts), 1, CEILING.maxAttempts),
    baseDelayMs: clamp(merged.baseDelayMs, 0, CEILING.baseDelayMs),
    maxDelayMs: clamp(merged.maxDelayMs, 0, CEILING.maxDelayMs),
    maxRetryAfterMs: clamp(merged.maxRetryAfterMs, 0, CEILING.maxRetryAfterMs),
  };
}

function clamp(value: number, min: number, max: number): number {
  return Number.isFinite(value) ? Math.min(max, Math.max(min, value)) : min;
}

/** "Full jitter" backoff before attempt `attempt + 1` (attempt counts from 1). */
export function backoffDelayMs(policy: RetryPolicy, attempt: number, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** Milliseconds a `Retry-After` header asks for (delta seconds or HTTP date); null when absent or invalid. */
export function parseRetryAfterMs(header: string | string[] | undefined, nowMs: number): number | null {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (value === undefined || value === "") return null;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  if (/^\d+\.\d+$/.test(value)) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - nowMs);
}

/** Resolves after `ms`, or early (false) when `signal` fires; the timer never outlives the wait. */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
