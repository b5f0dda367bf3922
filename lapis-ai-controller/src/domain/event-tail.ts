// The committed tail of a subscribed thread's transcript: the events its
// subscription pumps would otherwise read back from SQLite right after they
// were written (P-PRF-18). The store hands each transcript row over only
// after its COMMIT (never before: a rolled-back row never enters), so a page
// served from here holds only durable rows, exactly as the replay page of the
// same cursor would (the same fields in the same order, encoded once).
//
// - Only threads somebody watches (a live subscription) keep a tail, bounded
//   in rows and encoded bytes; the oldest rows go first, and the rows a pump
//   has sent are dropped, so a tail holds what was committed since the last
//   wake.
// - The tail is contiguous by seq: a row that does not follow the last one
//   (a row written by another path, a volatile row) starts it again.
// - Rows with a volatile payload (`metadata-only` threads, P-STO-17) never
//   enter: their payload lives only in volatile capture, which may lose it,
//   and a lost payload must read as `payloadUnavailable`; they end the tail,
//   so those pages come from the replay read as before.
// - A page is served only when the tail holds the row right after the
//   cursor; the pump then checks the thread's last seq (rows written by
//   other paths) and otherwise reads the replay page as before.
import type { ReplayEvent } from "./ports.ts";
import type { JournalRecord } from "./records.ts";

/** Bounds of one thread's tail. */
export interface EventTailLimits {
  readonly rows: number;
  readonly bytes: number;
}

/**
 * Defaults: one replay page of rows (subscriptions' BATCH), 1 MiB of encoded
 * events. `bytes` is the config's `limits.storage.eventTailBytes`, at most
 * EVENT_TAIL_MAX_BYTES; 0 keeps no tail (every page read from the journal).
 */
export const EVENT_TAIL_LIMITS: EventTailLimits = { rows: 256, bytes: 1024 * 1024 };
/** The ceiling of `limits.storage.eventTailBytes`. */
export const EVENT_TAIL_MAX_BYTES = 16 * 1024 * 1024;

/** One committed event and its JSON (the frame's `event` member). */
export type TailEvent = { readonly event: ReplayEvent; readonly json: string };

type Tail = { events: TailEvent[]; bytes: number; watchers: number };

/** The committed tails of the watched threads. */
export class EventTail {
  readonly #tails = new Map<string, Tail>();
  readonly #limits: EventTailLimits;

  constructor(limits: EventTailLimits = EVENT_TAIL_LIMITS) {
    this.#limits = { rows: Math.max(1, Math.floor(limits.rows)), bytes: Math.min(EVENT_TAIL_MAX_BYTES, Math.max(0, Math.floor(limits.bytes))) };
  }

  /** Keeps a tail for `threadId` while the returned release has not been called (counted per watcher). */
  watch(threadId: string): () => void {
    if (this.#limits.bytes === 0) return () => {};
    let tail = this.#tails.get(threadId);
    if (tail === undefined) {
      tail = { events: [], bytes: 0, watchers: 0 };
      this.#tails.set(threadId, tail);
    }
    tail.watchers += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const current = this.#tails.get(threadId);
      if (current === undefined) return;
      current.watchers -= 1;
      if (current.watchers <= 0) this.#tails.delete(threadId);
    };
  }

  /** A transcript row whose COMMIT has returned; called in commit order. Owner rows and unwatched threads are ignored. */
  committed(record: JournalRecord): void {
    if (record.seq === null || record.visibility !== "transcript") return;
    const tail = this.#tails.get(record.threadId);
    if (tail === undefined) return;
    const last = tail.events[tail.events.length - 1];
    if (record.payloadState === "volatile" || (last !== undefined && last.event.seq + 1 !== record.seq)) this.#clear(tail);
    if (record.payloadState === "volatile") return;
    // The replay page's shape and key order (persistence/journal-store.ts replay): base fields, then a stored payload.
    const base = { seq: record.seq, turnId: record.turnId, kind: record.kind, messageId: record.messageId, metadata: record.metadata, createdAt: record.createdAt };
    const event: ReplayEvent = record.payloadState === "stored" && record.payload !== null ? { ...base, payload: record.payload } : base;
    const json = JSON.stringify(event);
    if (json.length > this.#limits.bytes) return this.#clear(tail);
    tail.events.push({ event, json });
    tail.bytes += json.length;
    while (tail.events.length > this.#limits.rows || tail.bytes > this.#limits.bytes) {
      tail.bytes -= (tail.events.shift() as TailEvent).json.length;
    }
  }

  /** The committed events after `cursor` when the tail holds the one right after it; null otherwise (read the journal). */
  page(threadId: string, cursor: number): readonly TailEvent[] | null {
    const events = this.#tails.get(threadId)?.events;
    const first = events?.[0];
    if (events === undefined || first === undefined) return null;
    const from = cursor + 1 - first.event.seq;
    if (from < 0 || from >= events.length) return null;
    return events.slice(from);
  }

  /** Forgets the rows up to `seq` (a pump has sent them; a subscriber still behind reads the journal). */
  drop(threadId: string, seq: number): void {
    const tail = this.#tails.get(threadId);
    if (tail === undefined) return;
    while (tail.events.length > 0 && (tail.events[0] as TailEvent).event.seq <= seq) tail.bytes -= (tail.events.shift() as TailEvent).json.length;
  }

  /** Rows held for `threadId` (diagnostics and leak tests). */
  rows(threadId: string): number {
    return this.#tails.get(threadId)?.events.length ?? 0;
  }

  /** Threads with a tail (diagnostics and leak tests). */
  get size(): number {
    return this.#tails.size;
  }

  #clear(tail: Tail): void {
    tail.events = [];
    tail.bytes = 0;
  }
}
