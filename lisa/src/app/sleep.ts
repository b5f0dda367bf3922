/** Waits `ms` unless aborted (false then): the Matrix client's sleep; llm keeps its own copy, as it may not import matrix. */
export { abortableSleep as sleep } from "../matrix/retry.ts";

/** Exponential backoff with jitter and a cap. */
export class Backoff {
  #failures = 0;
  readonly #baseMs: number;
  readonly #maxMs: number;

  constructor(baseMs: number, maxMs: number) {
    this.#baseMs = baseMs;
    this.#maxMs = maxMs;
  }

  /** The next delay (at least `floorMs`, e.g. a server's retry hint), growing with each failure. */
  next(floorMs = 0): number {
    const exponential = Math.min(this.#maxMs, this.#baseMs * 2 ** Math.min(this.#failures, 20));
    this.#failures += 1;
    return Math.round(Math.max(exponential, Math.min(floorMs, this.#maxMs)) * (1 + 0.2 * Math.random()));
  }

  /** Forgets past failures after a success. */
  reset(): void {
    this.#failures = 0;
  }
}
