import type { Result } from "../errors.ts";
import { abortedError, MATRIX_CODES } from "./codes.ts";
import type { MatrixError } from "./errors.ts";

// Bounded retries for Matrix requests: rate limits wait the server's hint plus
// jitter, network and 5xx failures back off exponentially, everything else is
// returned at once. Every sleep is abortable and clears its timer.

/** Tunable retry settings; each is clamped to its hard ceiling. */
export interface RetryOptions {
  /** Retries after the first attempt (default 3, ceiling 10). */
  readonly maxRetries?: number;
  /** First backoff delay for network/5xx failures (default 500 ms, ceiling 30 s). */
  readonly baseDelayMs?: number;
  /** Largest backoff delay for network/5xx failures (default 30 s, ceiling 300 s). */
  readonly maxDelayMs?: number;
  /** Largest honoured rate-limit hint (default 60 s, ceiling 600 s). */
  readonly maxRetryAfterMs?: number;
  /** Extra random delay as a fraction of the base delay (default 0.2, ceiling 1). */
  readonly jitterRatio?: number;
  /** Random source in [0, 1) for jitter (tests pin it). */
  readonly random?: () => number;
}

/** Resolved, clamped retry settings. */
export interface RetryPolicy {
  readonly maxRetries: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly maxRetryAfterMs: number;
  readonly jitterRatio: number;
  readonly random: () => number;
}

/** Hard ceilings (and defaults) of the retry settings. */
export const RETRY_LIMITS = {
  maxRetries: { default: 3, max: 10 },
  baseDelayMs: { default: 500, max: 30_000 },
  maxDelayMs: { default: 30_000, max: 300_000 },
  maxRetryAfterMs: { default: 60_000, max: 600_000 },
  jitterRatio: { default: 0.2, max: 1 },
} as const;

/** Clamps `value` (or `fallback` when undefined or not finite) into [min, max]. */
export function clampSetting(value: number | undefined, fallback: number, min: number, max: number): number {
  const chosen = value === undefined || !Number.isFinite(value) ? fallback : value;
  return Math.min(max, Math.max(min, chosen));
}

/** Resolves retry options into a policy within the hard ceilings. */
export function resolveRetryPolicy(options: RetryOptions = {}): RetryPolicy {
  const L = RETRY_LIMITS;
  const baseDelayMs = clampSetting(options.baseDelayMs, L.baseDelayMs.default, 0, L.baseDelayMs.max);
  return {
    maxRetries: Math.floor(clampSetting(options.maxRetries, L.maxRetries.default, 0, L.maxRetries.max)),
    baseDelayMs,
    maxDelayMs: clampSetting(options.maxDelayMs, L.maxDelayMs.default, baseDelayMs, L.maxDelayMs.max),
    maxRetryAfterMs: clampSetting(options.maxRetryAfterMs, L.maxRetryAfterMs.default, 0, L.maxRetryAfterMs.max),
    jitterRatio: clampSetting(options.jitterRatio, L.jitterRatio.default, 0, L.jitterRatio.max),
    random: options.random ?? Math.random,
  };
}

/** Delay before retry number `attempt` (0-based) of `error`, or null when it must not be retried. */
export function retryDelayMs(policy: RetryPolicy, error: MatrixError, attempt: number): number | null {
  if (!error.retryable || attempt >= policy.maxRetries) return null;
  const jitter = Math.floor(policy.random() * policy.jitterRatio * Math.max(policy.baseDelayMs, 1));
  if (error.code === MATRIX_CODES.rateLimited) {
    const hinted = error.retryAfterMs ?? policy.baseDelayMs * 2 ** attempt;
    return Math.min(hinted, policy.maxRetryAfterMs) + jitter;
  }
  return Math.min(policy.baseDelayMs * 2 ** attempt, policy.maxDelayMs) + jitter;
}

/** Waits `ms` unless `signal` aborts first; resolves true when the full wait elapsed. Never leaves a timer behind. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<boolean> {
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

/** Called before each retry sleep (for logging). */
export type RetryObserver = (error: MatrixError, attempt: number, delayMs: number) => void;

/** Runs `attempt` until it succeeds, fails non-retryably, the policy's retries are spent, or `mayRetry` says no. */
export async function withRetry<T>(
  policy: RetryPolicy,
  signal: AbortSignal,
  attempt: (attemptNumber: number) => Promise<Result<T, MatrixError>>,
  onRetry?: RetryObserver,
  mayRetry: () => boolean = () => true,
): Promise<Result<T, MatrixError>> {
  for (let attemptNumber = 0; ; attemptNumber += 1) {
    const result = await attempt(attemptNumber);
    if (result.ok) return result;
    const delay = retryDelayMs(policy, result.error, attemptNumber);
    if (delay === null || signal.aborted || !mayRetry()) return result;
    onRetry?.(result.error, attemptNumber + 1, delay);
    if (!(await abortableSleep(delay, signal))) return { ok: false, error: abortedError() };
  }
}
