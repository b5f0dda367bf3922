import { ok, type Result } from "../errors.ts";
import type { MatrixError } from "../matrix/errors.ts";
import type { ForwardHistoryPort, RawEvent } from "../matrix/port.ts";

// Exactly-once independent of the server's transaction-id scope: every reply
// carries its invocation's transaction id in a namespaced content field, and a
// stored reply about to be resent under another access token than an earlier
// attempt is first looked for in the room (Dendrite scopes txn ids
// to the access token, so the txn id alone does not deduplicate there).

/** Content key of the marker: the invocation's Matrix transaction id. */
export const REPLY_MARKER_KEY = "org.lisa.txn_id";

/** How far after the invoking event the lookup reads. */
export interface SentLookupLimits {
  /** Events read with `/context` right after the invoking event (1-50). */
  readonly contextEvents: number;
  /** Further forward `/messages` pages of Lisa's own events (0-20). */
  readonly maxPages: number;
  /** Events per forward page (1-100). */
  readonly pageSize: number;
}

/** Defaults: about one busy hour of a small room after the invocation. */
export const DEFAULT_SENT_LOOKUP_LIMITS: SentLookupLimits = { contextEvents: 50, maxPages: 5, pageSize: 100 };

/** Finds Lisa's reply carrying `txnId` after the invoking event; null when none is within the bounds. */
export type SentReplyLookup = (roomId: string, invokingEventId: string, txnId: string, signal: AbortSignal) => Promise<Result<string | null, MatrixError>>;

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, Math.floor(value)));
}

// An encrypted reply carries the marker outside its ciphertext too (LISA-E2EE-07).
const REPLY_TYPES: ReadonlySet<string> = new Set(["m.room.message", "m.room.encrypted"]);

function markedBy(events: readonly RawEvent[], selfUserId: string, txnId: string): string | null {
  const found = events.find((event) => event.sender === selfUserId && REPLY_TYPES.has(event.type) && event.content[REPLY_MARKER_KEY] === txnId);
  return found?.event_id ?? null;
}

/** Builds the bounded lookup over `/context` after the invoking event, then forward `/messages` of Lisa's events. */
export function createSentReplyLookup(history: ForwardHistoryPort, selfUserId: string, limits: SentLookupLimits = DEFAULT_SENT_LOOKUP_LIMITS): SentReplyLookup {
  const contextEvents = clamp(limits.contextEvents, 1, 50);
  const maxPages = clamp(limits.maxPages, 0, 20);
  const pageSize = clamp(limits.pageSize, 1, 100);
  return async (roomId, invokingEventId, txnId, signal) => {
    const first = await history.eventsAfter(roomId, invokingEventId, contextEvents, signal);
    if (!first.ok) return first;
    let found = markedBy(first.value.events, selfUserId, txnId);
    let next = first.value.next;
    for (let pages = 0; found === null && next !== null && pages < maxPages; pages += 1) {
      const page = await history.messagesForward(roomId, next, pageSize, selfUserId, signal);
      if (!page.ok) return page;
      found = markedBy(page.value.events, selfUserId, txnId);
      next = page.value.next;
    }
    return ok(found);
  };
}
