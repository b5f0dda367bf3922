/** A counting semaphore with FIFO waiters; `acquire` resolves to a release function. */
export class Semaphore {
  #available: number;
  readonly #waiters: Array<() => void> = [];

  constructor(permits: number) {
    if (!Number.isInteger(permits) || permits < 1) throw new RangeError("permits must be a positive integer");
    this.#available = permits;
  }

  /** Permits currently free. */
  get available(): number {
    return this.#available;
  }

  /** Waits for a permit; rejects with the signal's reason if aborted first. */
  acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.#available > 0) {
      this.#available -= 1;
      return Promise.resolve(this.#releaser());
    }
    return new Promise((resolve, reject) => {
      const grant = (): void => {
        signal.removeEventListener("abort", onAbort);
        resolve(this.#releaser());
      };
      const onAbort = (): void => {
        const index = this.#waiters.indexOf(grant);
        if (index >= 0) this.#waiters.splice(index, 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiters.push(grant);
    });
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiters.shift();
      if (next === undefined) this.#available += 1;
      else next();
    };
  }
}
