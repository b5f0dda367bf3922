import type { MatrixError } from "../matrix/errors.ts";

/** First delay before re-sending a stored reply after a transient failure. */
export const SEND_RETRY_BASE_MS = 2_000;
/** Longest delay between transient send retries. */
export const SEND_RETRY_MAX_MS = 300_000;
/** Delay after a permanent rejection; a restart also retries at once. */
export const SEND_REJECTED_RETRY_MS = 3_600_000;

/** Delay before the next send attempt of a stored reply, by failure kind and prior failures. */
export function sendBackoffMs(error: Pick<MatrixError, "retryable" | "retryAfterMs">, priorFailures: number, random = Math.random): number {
  if (!error.retryable) return SEND_REJECTED_RETRY_MS;
  const exponential = Math.min(SEND_RETRY_MAX_MS, SEND_RETRY_BASE_MS * 2 ** Math.min(priorFailures, 20));
  const base = Math.max(exponential, Math.min(error.retryAfterMs ?? 0, SEND_RETRY_MAX_MS));
  return Math.round(base * (1 + 0.2 * random()));
}
