// Scripted, deterministic faults: the first queued fault whose matcher accepts a
// request shapes it, until its count is used up.

import type { Fault, FaultMatcher, RequestInfo } from "./types.ts";

interface QueuedFault {
  readonly matcher: FaultMatcher;
  readonly fault: Fault;
  remaining: number;
}

/** FIFO of pending faults. */
export class FaultQueue {
  private readonly queue: QueuedFault[] = [];

  /** Queues `fault` for the next `times` requests that `matcher` accepts. */
  add(matcher: FaultMatcher, fault: Fault, times: number): void {
    if (!Number.isInteger(times) || times < 1) throw new Error("fake homeserver: fault times must be a positive integer");
    this.queue.push({ matcher, fault, remaining: times });
  }

  /** Takes (consumes one use of) the first fault matching `request`, if any. */
  take(request: RequestInfo): Fault | null {
    const index = this.queue.findIndex((q) => (typeof q.matcher === "string" ? q.matcher === request.endpoint : q.matcher(request)));
    const entry = this.queue[index];
    if (entry === undefined) return null;
    entry.remaining -= 1;
    if (entry.remaining === 0) this.queue.splice(index, 1);
    return entry.fault;
  }

  /** Faults (counting each remaining use) still waiting for a request. */
  get pending(): number {
    return this.queue.reduce((sum, q) => sum + q.remaining, 0);
  }

  /** Drops every queued fault. */
  clear(): void {
    this.queue.length = 0;
  }
}
