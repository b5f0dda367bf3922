// In-process notice that a thread's journal grew. Subscribers read the
// journal itself by seq, so a lost or merged notice can never cause a gap.
import { setImmediate } from "node:timers";
import { EVENT_TAIL_LIMITS, EventTail } from "./event-tail.ts";

/**
 * Listener told the thread after a commit. No seq: listeners read the journal
 * by their own cursor, so a notice costs no `max(seq)` query (P-PRF-10).
 */
export type JournalListener = (threadId: string) => void;

/** Publishes journal growth to subscriptions. */
export class ThreadEventHub {
  readonly #listeners = new Map<string, Set<JournalListener>>();
  /** The committed tails of subscribed threads, filled by the store after each COMMIT (P-PRF-18). */
  readonly tail: EventTail;

  /** `tailBytes`: the bound of each watched thread's committed tail (config `limits.storage.eventTailBytes`; 0: none). */
  constructor(tailBytes: number = EVENT_TAIL_LIMITS.bytes) {
    this.tail = new EventTail({ rows: EVENT_TAIL_LIMITS.rows, bytes: tailBytes });
  }

  /** Listens to one thread; returns the unsubscribe function. */
  listen(threadId: string, listener: JournalListener): () => void {
    let set = this.#listeners.get(threadId);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(threadId, set);
    }
    set.add(listener);
    return () => {
      const current = this.#listeners.get(threadId);
      current?.delete(listener);
      if (current !== undefined && current.size === 0) this.#listeners.delete(threadId);
    };
  }

  /** Called after a committed append; listener failures never reach the writer. */
  published(threadId: string): void {
    const set = this.#listeners.get(threadId);
    if (set === undefined) return;
    for (const listener of [...set]) {
      try {
        listener(threadId);
      } catch {
        // A broken subscriber drops itself; the journal stays the source of truth.
        set.delete(listener);
      }
    }
  }

  /** Number of threads with listeners (diagnostics and leak tests). */
  get size(): number {
    return this.#listeners.size;
  }
}

/**
 * One notice per thread per round (`schedule`'s: a microtask by default): a
 * burst of appends (a group commit of forty chunks) wakes each listener once,
 * after the writing transaction, instead of once per row. Listeners read the
 * journal themselves, so a merged notice loses nothing.
 */
export function coalescedNotices(publish: (threadId: string) => void, schedule: (run: () => void) => void = queueMicrotask): (threadId: string) => void {
  const due = new Set<string>();
  return (threadId) => {
    if (due.has(threadId)) return;
    due.add(threadId);
    schedule(() => {
      due.delete(threadId);
      publish(threadId);
    });
  };
}

/**
 * The service's journal notices: each wakes the thread's listeners with its id
 * alone (no journal read, P-PRF-10), merged per thread until the next
 * macrotask (P-PRF-11). The macrotask lets the code that committed finish its
 * synchronous and microtask work first: a submit's receipt commit runs on
 * through preparation to the dispatch commit and the prompt written to the
 * agent before any subscription pump or held wait reads the journal, and the
 * pumps then send what both commits added in one round.
 */
export function journalNotices(hub: ThreadEventHub, schedule: (run: () => void) => void = (run) => void setImmediate(run)): (threadId: string) => void {
  return coalescedNotices((threadId) => hub.published(threadId), schedule);
}
