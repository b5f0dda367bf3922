// Thread watches of the SDK client: each watch is one server subscription
// with its own cursor, so each consumer gets every event once, in seq order,
// across reconnects (re-snapshot, then resubscribe from its cursor). Several
// watches may follow one thread; subscribes on one thread are serialized so
// catch-up events that arrive before a subscribe reply belong to exactly one
// pending watch.
import type { ThreadEvent, ThreadSnapshot } from "../domain/contract/sdk-types.ts";

/** A request to the service: a value, or a failure code. */
export type RawRequest = (method: string, params: Record<string, unknown>) => Promise<
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: { readonly code: string; readonly retryable: boolean } }
>;

/** One event as delivered to a consumer, in seq order with no gap and no duplicate. */
export interface ThreadEventDelivery {
  readonly threadId: string;
  readonly seq: number;
  readonly event: ThreadEvent;
}

/** A consumer of one thread's events. */
export interface ThreadListener {
  event(delivery: ThreadEventDelivery): void;
  /** Called with a fresh snapshot after each reconnect, before resumed events. */
  snapshot?(snapshot: ThreadSnapshot): void;
  /** Called once when the watch ends for good (closed, or the client closed). */
  ended?(code: string | null): void;
}

/** A live watch; `close()` unsubscribes. */
export interface WatchHandle {
  readonly threadId: string;
  close(): Promise<void>;
}

interface Watch {
  readonly threadId: string;
  readonly listener: ThreadListener;
  lastSeq: number;
  subscriptionId: string | null;
  closed: boolean;
}

/** The watches of one client. */
export class ThreadWatches {
  readonly #raw: RawRequest;
  readonly #fail: (failure: { readonly code: string; readonly retryable: boolean }) => Error;
  readonly #watches = new Set<Watch>();
  readonly #chains = new Map<string, Promise<unknown>>();

  /** `fail` turns a refusal into the error `add` rejects with. */
  constructor(raw: RawRequest, fail: (failure: { readonly code: string; readonly retryable: boolean }) => Error) {
    this.#raw = raw;
    this.#fail = fail;
  }

  /** Starts a watch from `afterSeq` (default: now); rejects with the failure when the subscribe is refused. */
  async add(threadId: string, listener: ThreadListener, afterSeq?: number): Promise<WatchHandle> {
    const watch: Watch = { threadId, listener, lastSeq: afterSeq ?? -1, subscriptionId: null, closed: false };
    this.#watches.add(watch);
    const failure = await this.#subscribe(watch, afterSeq);
    if (failure !== null) {
      this.#watches.delete(watch);
      throw this.#fail(failure);
    }
    return { threadId, close: () => this.#close(watch, null) };
  }

  async #close(watch: Watch, code: string | null): Promise<void> {
    if (watch.closed) return;
    watch.closed = true;
    this.#watches.delete(watch);
    const id = watch.subscriptionId;
    watch.listener.ended?.(code);
    if (id !== null) await this.#raw("threads.unsubscribe", { subscriptionId: id }).catch(() => undefined);
  }

  /** Ends every watch (the client closed for good). */
  endAll(code: string): void {
    for (const watch of [...this.#watches]) {
      watch.closed = true;
      this.#watches.delete(watch);
      watch.listener.ended?.(code);
    }
  }

  #subscribe(watch: Watch, afterSeq: number | undefined): Promise<{ code: string; retryable: boolean } | null> {
    const previous = this.#chains.get(watch.threadId);
    const request = async () => {
      const params: Record<string, unknown> = { threadId: watch.threadId };
      if (afterSeq !== undefined) params.afterSeq = afterSeq;
      watch.subscriptionId = null;
      const reply = await this.#raw("threads.subscribe", params);
      if (!reply.ok) return reply.error;
      const result = reply.value as { subscriptionId: string; cursor: number };
      watch.subscriptionId = result.subscriptionId;
      if (watch.lastSeq < 0) watch.lastSeq = result.cursor;
      return null;
    };
    // With nothing pending on the thread the request goes out now, in call order (before a later submit).
    const run = previous === undefined ? request() : previous.then(request);
    const settled = run.catch(() => null);
    this.#chains.set(watch.threadId, settled);
    void settled.then(() => {
      if (this.#chains.get(watch.threadId) === settled) this.#chains.delete(watch.threadId);
    });
    return run;
  }

  async #resume(watch: Watch): Promise<void> {
    if (watch.closed) return;
    const snap = await this.#raw("threads.snapshot", { threadId: watch.threadId });
    if (snap.ok) watch.listener.snapshot?.(snap.value as ThreadSnapshot);
    const failure = await this.#subscribe(watch, Math.max(0, watch.lastSeq));
    // A thread that is gone or no longer visible ends the watch with that code.
    if (failure !== null && !failure.retryable && failure.code !== "connection_lost") await this.#close(watch, failure.code);
  }

  /** After a reconnect: re-snapshot and resubscribe every watch from its cursor. */
  async resumeAll(): Promise<void> {
    for (const watch of [...this.#watches]) await this.#resume(watch);
  }

  /** Routes a notification; true when it was a watch's. */
  onNotification(method: string, params: Record<string, unknown>): boolean {
    if (method === "subscription.closed") {
      for (const watch of this.#watches) if (watch.subscriptionId === params.subscriptionId) void this.#resume(watch);
      return true;
    }
    if (method !== "event") return false;
    const seq = Number(params.seq);
    if (!Number.isSafeInteger(seq)) return true;
    const known = new Set([...this.#watches].map((w) => w.subscriptionId));
    for (const watch of this.#watches) {
      if (watch.threadId !== params.threadId) continue;
      // Catch-up events may arrive before the subscribe reply: an unknown subscription's
      // events belong to the thread's one pending watch (subscribes are serialized).
      const mine = watch.subscriptionId === params.subscriptionId || (watch.subscriptionId === null && !known.has(String(params.subscriptionId)));
      if (!mine || seq <= watch.lastSeq) continue;
      watch.lastSeq = seq;
      watch.listener.event({ threadId: watch.threadId, seq, event: params.event as ThreadEvent });
    }
    return true;
  }
}
