// A deadline for one piece of work that ends with the work: unlike
// `AbortSignal.timeout`, whose timer (and everything the signal and its
// listeners hold) lives until it fires, `clear()` drops the timer as soon as
// the work is done. Like it, the timer never keeps the process alive.

/** A signal that aborts with `outer` or, with a `TimeoutError`, after `ms`. */
export interface Deadline {
  readonly signal: AbortSignal;
  /** Drops the timer; call it when the work is done. */
  clear(): void;
}

export function deadlineFor(outer: AbortSignal, ms: number): Deadline {
  const own = new AbortController();
  const timer = setTimeout(() => own.abort(new DOMException("The operation timed out.", "TimeoutError")), ms);
  timer.unref();
  return { signal: AbortSignal.any([outer, own.signal]), clear: () => clearTimeout(timer) };
}
