import { err, ok, type Result } from "../errors.ts";
import type { HistoryPort, RawEvent } from "../matrix/port.ts";
import type { Logger } from "../log/logger.ts";
import { abortedError, type ContextError } from "./types.ts";

// Main-timeline history anchored at the invocation: one `/context` call, then bounded backwards `/messages` pages from its
// `start` token while the budget still wants older messages.

/** Largest `limit` homeservers honour on `/context` and `/messages`. */
export const SERVER_PAGE_CAP = 100;
/** Hard ceiling on backwards pages fetched beyond `/context` for one invocation. */
export const MAX_BACKFILL_PAGES = 4;

/** What a fetch needs to know about its caller. */
export interface FetchScope {
  readonly history: HistoryPort;
  readonly roomId: string;
  readonly invocation: RawEvent;
  readonly signal: AbortSignal;
  readonly log: Logger;
}

/** History strictly before the invocation, chronological, from the invocation's room only. */
export interface FetchedHistory {
  readonly events: readonly RawEvent[];
  /** Member state events for display names. */
  readonly state: readonly RawEvent[];
  readonly pages: number;
}

/** Page size that covers `maxEvents` after `/context` splits its limit before/after. */
export function pageSizeFor(maxEvents: number): number {
  return Math.min(SERVER_PAGE_CAP, 2 * maxEvents + 1);
}

/**
 * Keeps the events of a chronological list that may enter context: same room
 * (when `room_id` is present), not the invocation, not after it by timestamp,
 * and not positioned after it when the list contains it.
 */
export function eventsBefore(chronological: readonly RawEvent[], roomId: string, invocation: RawEvent): RawEvent[] {
  const anchorAt = chronological.findIndex((e) => e.event_id === invocation.event_id);
  const candidates = anchorAt === -1 ? chronological : chronological.slice(0, anchorAt);
  return candidates.filter(
    (e) =>
      (e.room_id === undefined || e.room_id === roomId) &&
      e.event_id !== invocation.event_id &&
      typeof e.origin_server_ts === "number" &&
      e.origin_server_ts <= invocation.origin_server_ts,
  );
}

/** Prepends older events, skipping ids already held. */
export function prependUnique(older: readonly RawEvent[], newer: readonly RawEvent[]): RawEvent[] {
  const seen = new Set(newer.map((e) => e.event_id));
  const fresh: RawEvent[] = [];
  for (const event of older) {
    if (seen.has(event.event_id)) continue;
    seen.add(event.event_id);
    fresh.push(event);
  }
  return [...fresh, ...newer];
}

/**
 * Fetches main-timeline history before the invocation. A failed `/context`
 * degrades to no history (logged as `context_unavailable`); only an abort is an error.
 */
export async function fetchMainHistory(
  scope: FetchScope,
  maxEvents: number,
  enough: (events: readonly RawEvent[]) => boolean,
): Promise<Result<FetchedHistory, ContextError>> {
  const { history, roomId, invocation, signal, log } = scope;
  const limit = pageSizeFor(maxEvents);
  const context = await history.context(roomId, invocation.event_id, limit, signal);
  if (signal.aborted) return err(abortedError(signal));
  if (!context.ok) {
    log.warn("context_unavailable", { code: context.error.code });
    return ok({ events: [], state: [], pages: 0 });
  }
  let events = eventsBefore([...context.value.eventsBefore].reverse(), roomId, invocation);
  let token = context.value.start;
  let pages = 0;
  while (token !== null && pages < MAX_BACKFILL_PAGES && !enough(events)) {
    const page = await history.messagesBackwards(roomId, token, limit, signal);
    if (signal.aborted) return err(abortedError(signal));
    if (!page.ok) {
      log.warn("context_backfill_failed", { code: page.error.code, pages });
      break;
    }
    pages += 1;
    if (page.value.events.length === 0) break;
    events = prependUnique(eventsBefore([...page.value.events].reverse(), roomId, invocation), events);
    token = page.value.next === token ? null : page.value.next;
  }
  return ok({ events, state: context.value.state, pages });
}
