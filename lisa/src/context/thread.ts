import { err, ok, type Result } from "../errors.ts";
import type { RawEvent } from "../matrix/port.ts";
import { eventsBefore, pageSizeFor, prependUnique, type FetchScope } from "./fetch.ts";
import { relationOf } from "./normalise.ts";
import { abortedError, type ContextError } from "./types.ts";

// Thread history: the root (fetched by id) plus the thread's own events before
// the invocation, paged backwards through `/relations/{root}/m.thread`. Pages
// start at the thread's newest event, so later replies are paged past and dropped.

/** Hard ceiling on thread pages fetched for one invocation. */
export const MAX_THREAD_PAGES = 6;

/** The thread root as fetched: usable, or unavailable (missing, failed, another room). */
export type ThreadRoot = { readonly status: "ok"; readonly event: RawEvent } | { readonly status: "unavailable" };

/** A thread's history before the invocation. */
export interface FetchedThread {
  readonly root: ThreadRoot;
  /** Thread events (root excluded) before the invocation, chronological. */
  readonly events: readonly RawEvent[];
  /** Member state events for display names (best effort). */
  readonly state: readonly RawEvent[];
  readonly pages: number;
}

async function fetchRoot(scope: FetchScope, rootId: string): Promise<Result<ThreadRoot, ContextError>> {
  const { history, roomId, invocation, signal, log } = scope;
  const root = await history.event(roomId, rootId, signal);
  if (signal.aborted) return err(abortedError(signal));
  if (!root.ok) {
    log.warn("context_thread_root_unavailable", { code: root.error.code });
    return ok({ status: "unavailable" });
  }
  const event = root.value;
  const sameRoom = event.room_id === undefined || event.room_id === roomId;
  if (!sameRoom || event.event_id !== rootId || event.origin_server_ts > invocation.origin_server_ts) {
    log.warn("context_thread_root_unavailable", { code: sameRoom ? "context_root_mismatch" : "context_cross_room" });
    return ok({ status: "unavailable" });
  }
  return ok({ status: "ok", event });
}

// Relations carry no member state; a minimal `/context` supplies display names.
async function fetchMemberState(scope: FetchScope): Promise<Result<readonly RawEvent[], ContextError>> {
  const { history, roomId, invocation, signal, log } = scope;
  const context = await history.context(roomId, invocation.event_id, 1, signal);
  if (signal.aborted) return err(abortedError(signal));
  if (!context.ok) {
    log.debug("context_members_unavailable", { code: context.error.code });
    return ok([]);
  }
  return ok(context.value.state);
}

/**
 * Fetches the thread's root and its events before the invocation, paging
 * backwards while `enough` says more is wanted. Only an abort is an error.
 */
export async function fetchThreadHistory(
  scope: FetchScope,
  rootId: string,
  maxEvents: number,
  enough: (events: readonly RawEvent[]) => boolean,
): Promise<Result<FetchedThread, ContextError>> {
  const { history, roomId, invocation, signal, log } = scope;
  const root = await fetchRoot(scope, rootId);
  if (!root.ok) return root;
  const state = await fetchMemberState(scope);
  if (!state.ok) return state;
  const limit = pageSizeFor(maxEvents);
  const inThread = (e: RawEvent): boolean => {
    const rel = relationOf(e.content ?? {});
    return rel.relType === "m.thread" && rel.eventId === rootId;
  };
  let events: RawEvent[] = [];
  let reachedAnchor = false;
  let sawAnchor = false;
  let from: string | null = null;
  let pages = 0;
  while (pages < MAX_THREAD_PAGES && !(reachedAnchor && enough(events))) {
    const page = await history.threadBackwards(roomId, rootId, from, limit, signal);
    if (signal.aborted) return err(abortedError(signal));
    if (!page.ok) {
      log.warn("context_thread_unavailable", { code: page.error.code, pages });
      break;
    }
    pages += 1;
    const chronological = [...page.value.events].reverse();
    const hasAnchor = chronological.some((e) => e.event_id === invocation.event_id);
    let kept = eventsBefore(chronological, roomId, invocation).filter(inThread);
    // Until the anchor has been seen, an equal timestamp may still be a later reply.
    if (!hasAnchor && !sawAnchor) kept = kept.filter((e) => e.origin_server_ts < invocation.origin_server_ts);
    sawAnchor ||= hasAnchor;
    reachedAnchor ||= sawAnchor || kept.length > 0;
    events = prependUnique(kept, events);
    if (page.value.next === null || page.value.next === from || page.value.events.length === 0) break;
    from = page.value.next;
  }
  return ok({ root: root.value, events, state: state.value, pages });
}
