// Thread watches of the SDK client: each watch is one server subscription
// with its own cursor, so each consumer gets every event once, in seq order,
// across reconnects (re-snapshot, then resubscribe from its cursor). Several
// watches may follow one thread; subscribes on one thread are serialized so
// catch-up events that arrive before a subscribe reply belong to exactly one
// pending watch. An event is routed by its subscription id (a map), so its
// cost does not grow with the number of watches.
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
  /** The watch of each current subscription id. */
  readonly #bySubscription = new Map<string, Watch>();
  /** The watches of each thread. */
  readonly #byThread = new Map<string, Set<Watch>>();
  readonly #chains = new Map<string, Promise<unknown>>();

  /** `fail` turns a refusal into the error `add` rejects with. */
  constructor(raw: RawRequest, fail: (failure: { readonly code: string; readonly retryable: boolean }) => Error) {
    this.#raw = raw;
    this.#fail = fail;
  }

  /** Starts a watch from `afterSeq` (default: now); rejects with the failure when the subscribe is refused. */
  async add(threadId: string, listener: ThreadListener, afterSeq?: number): Promise<WatchHandle> {
    const watch: Watch = { threadId, listener, lastSeq: afterSeq ?? -1, subscriptionId: null, closed: false };
    this.#track(watch);
    const failure = await this.#subscribe(watch, afterSeq);
    if (failure !== null) {
      this.#untrack(watch);
      throw this.#fail(failure);
    }
    return { threadId, close: () => this.#close(watch, null) };
  }

  #track(watch: Watch): void {
    this.#watches.add(watch);
    const of = this.#byThread.get(watch.threadId);
    if (of === undefined) this.#byThread.set(watch.threadId, new Set([watch]));
    else of.add(watch);
  }

  #untrack(watch: Watch): void {
    this.#watches.delete(watch);
    this.#setSubscription(watch, null);
    const of = this.#byThread.get(watch.threadId);
    of?.delete(watch);
    if (of?.size === 0) this.#byThread.delete(watch.threadId);
  }

  /** Sets a watch's subscription id and keeps the index by id true. */
  #setSubscription(watch: Watch, id: string | null): void {
    if (watch.subscriptionId !== null && this.#bySubscription.get(watch.subscriptionId) === watch) this.#bySubscription.delete(watch.subscriptionId);
    watch.subscriptionId = id;
    if (id !== null) this.#bySubscription.set(id, watch);
  }

  async #close(watch: Watch, code: string | null): Promise<void> {
    if (watch.closed) return;
    watch.closed = true;
    const id = watch.subscriptionId;
    this.#untrack(watch);
    watch.listener.ended?.(code);
    if (id !== null) await this.#raw("threads.unsubscribe", { subscriptionId: id }).catch(() => undefined);
  }

  /** Ends every watch (the client closed for good). */
  endAll(code: string): void {
    for (const watch of [...this.#watches]) {
      watch.closed = true;
      this.#untrack(watch);
      watch.listener.ended?.(code);
    }
  }

  #subscribe(watch: Watch, afterSeq: number | undefined): Promise<{ code: string; retryable: boolean } | null> {
    const previous = this.#chains.get(watch.threadId);
    const request = async () => {
      const params: Record<string, unknown> = { threadId: watch.threadId };
      if (afterSeq !== undefined) params.afterSeq = afterSeq;
      this.#setSubscription(watch, null);
      const reply = await this.#raw("threads.subscribe", params);
      if (!reply.ok) return reply.error;
      const result = reply.value as { subscriptionId: string; cursor: number };
      // A watch closed while its subscribe was in flight stays out of the index.
      if (watch.closed) watch.subscriptionId = result.subscriptionId;
      else this.#setSubscription(watch, result.subscriptionId);
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
      const watch = this.#bySubscription.get(String(params.subscriptionId));
      if (watch !== undefined) void this.#resume(watch);
      return true;
    }
    if (method !== "event") return false;
    const seq = Number(params.seq);
    if (!Number.isSafeInteger(seq)) return true;
    const threadId = params.threadId;
    const owner = this.#bySubscription.get(String(params.subscriptionId));
    if (owner !== undefined) {
      if (owner.threadId === threadId) this.#deliver(owner, seq, params.event);
      return true;
    }
    // Catch-up events may arrive before the subscribe reply: an unknown subscription's
    // events belong to the thread's one pending watch (subscribes are serialized).
    const of = typeof threadId === "string" ? this.#byThread.get(threadId) : undefined;
    if (of !== undefined) for (const watch of [...of]) if (watch.subscriptionId === null) this.#deliver(watch, seq, params.event);
    return true;
  }

  #deliver(watch: Watch, seq: number, event: unknown): void {
    if (watch.closed || seq <= watch.lastSeq) return;
    watch.lastSeq = seq;
    watch.listener.event({ threadId: watch.threadId, seq, event: event as ThreadEvent });
  }
}
