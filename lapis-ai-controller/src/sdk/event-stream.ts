// An async iterator over a thread's events, built on one watch (the
// subscription): no polling. The buffer between the socket and a slow
// consumer is bounded; past it the stream ends with `events_overflow`.
import type { ClientErrorCode } from "../domain/contract/sdk-types.ts";
import type { ThreadEventDelivery, ThreadListener, WatchHandle } from "./watches.ts";

/** Opens a watch for a listener. */
export type OpenWatch = (threadId: string, listener: ThreadListener, afterSeq?: number) => Promise<WatchHandle>;

/** Options of an event stream. */
export interface EventStreamOptions {
  /** Start after this seq (0: the whole retained history); default: from now. */
  readonly afterSeq?: number;
  /** Most undelivered events held for a slow consumer (default 10,000, at most 1,000,000). */
  readonly maxBuffered?: number;
}

/** A thread's events as an async iterator; `close()` (or leaving a for-await loop) ends the subscription. */
export interface ThreadEventStream extends AsyncIterableIterator<ThreadEventDelivery> {
  close(): Promise<void>;
}

/** Default and ceiling of the stream buffer. */
export const EVENT_BUFFER = { default: 10_000, max: 1_000_000 } as const;

/** Creates a stream; the subscription starts at once, a refusal surfaces on the first `next()`. */
export function eventStream(open: OpenWatch, threadId: string, fail: (code: ClientErrorCode | string) => Error, options: EventStreamOptions = {}): ThreadEventStream {
  const max = Math.min(EVENT_BUFFER.max, Math.max(1, options.maxBuffered ?? EVENT_BUFFER.default));
  const queue: ThreadEventDelivery[] = [];
  let waiter: ((r: IteratorResult<ThreadEventDelivery>) => void) | null = null;
  let rejecter: ((e: unknown) => void) | null = null;
  let ended: { error: Error | null } | null = null;
  const finish = (error: Error | null) => {
    if (ended !== null) return;
    ended = { error };
    if (waiter !== null) {
      const [resolve, reject] = [waiter, rejecter];
      waiter = rejecter = null;
      if (error === null) resolve({ done: true, value: undefined });
      else reject?.(error);
    }
  };
  const listener: ThreadListener = {
    event: (delivery) => {
      if (ended !== null) return;
      if (waiter !== null) {
        const resolve = waiter;
        waiter = rejecter = null;
        resolve({ done: false, value: delivery });
        return;
      }
      queue.push(delivery);
      if (queue.length > max) {
        queue.length = 0;
        finish(fail("events_overflow"));
        void handle.then((h) => h.close(), () => undefined);
      }
    },
    ended: (code) => finish(code === null ? null : fail(code)),
  };
  const handle = open(threadId, listener, options.afterSeq);
  handle.catch((error: unknown) => finish(error instanceof Error ? error : fail("internal_error")));
  const close = async () => {
    queue.length = 0;
    finish(null);
    await handle.then((h) => h.close(), () => undefined);
  };
  const stream: ThreadEventStream = {
    async next() {
      await handle.catch(() => undefined);
      const head = queue.shift();
      if (head !== undefined) return { done: false, value: head };
      if (ended !== null) {
        const e = (ended as { error: Error | null }).error;
        if (e !== null) throw e;
        return { done: true, value: undefined };
      }
      return new Promise((resolve, reject) => {
        waiter = resolve;
        rejecter = reject;
      });
    },
    async return() {
      await close();
      return { done: true, value: undefined };
    },
    close,
    [Symbol.asyncIterator]() {
      return stream;
    },
  };
  return stream;
}
