import { err, ok, type Result } from "../errors.ts";
import { invocationHash, roomHash } from "../log/hash.ts";
import type { RawEvent } from "../matrix/port.ts";
import { renderBlock, displayNames } from "./block.ts";
import { eventCap, selectTurns } from "./budget.ts";
import { fetchMainHistory, type FetchScope } from "./fetch.ts";
import { isEdit, normaliseEvents, normaliseMessage, threadRootOf, type NormaliseOptions } from "./normalise.ts";
import { resolveReplies } from "./replies.ts";
import { fetchThreadHistory, type ThreadRoot } from "./thread.ts";
import { abortedError, ContextError, type ContextRequest, type RoomContext, type Turn } from "./types.ts";

// Builds the bounded `<room_context>` of one invocation: fetch (main timeline
// or thread), normalise, budget, resolve replies, render.

/** Cheap estimate of whether fetched history already fills the budget (no HTML parsing). */
function enoughFor(request: ContextRequest, inThread: boolean): (events: readonly RawEvent[]) => boolean {
  const cap = eventCap(request.limits);
  return (events) => {
    let count = 1;
    let characters = 0;
    for (const event of events) {
      if (event.type !== "m.room.message" || isEdit(event)) continue;
      if (!inThread && threadRootOf(event) !== null) continue;
      const body = event.content["body"];
      count += 1;
      characters += Math.min(cap, typeof body === "string" ? body.length : 0);
    }
    return count >= request.limits.max_events || characters >= request.limits.max_characters;
  };
}

interface Gathered {
  readonly history: readonly RawEvent[];
  readonly state: readonly RawEvent[];
  readonly root: ThreadRoot | null;
  readonly pages: number;
}

async function gather(request: ContextRequest, rootId: string | null): Promise<Result<Gathered, ContextError>> {
  const scope: FetchScope = request;
  const enough = enoughFor(request, rootId !== null);
  if (rootId === null) {
    const main = await fetchMainHistory(scope, request.limits.max_events, enough);
    return main.ok ? ok({ ...main.value, history: main.value.events, root: null }) : main;
  }
  const thread = await fetchThreadHistory(scope, rootId, request.limits.max_events, enough);
  return thread.ok ? ok({ ...thread.value, history: thread.value.events }) : thread;
}

function rootTurn(root: ThreadRoot | null, options: NormaliseOptions, roomId: string): Turn | null {
  if (root === null || root.status !== "ok") return null;
  const turn = normaliseEvents([root.event], options).get(root.event.event_id) ?? null;
  return turn !== null && (root.event.room_id === undefined || root.event.room_id === roomId) ? turn : null;
}

/**
 * Builds the bounded, escaped `<room_context>` block for an invocation
 * (the thread's root first when the invocation is in a thread). History failures degrade to less
 * context; only an abort or an unusable invocation is an error.
 */
export async function buildRoomContext(request: ContextRequest): Promise<Result<RoomContext, ContextError>> {
  const { invocation, roomId, limits, signal } = request;
  if (signal.aborted) return err(abortedError(signal));
  if (invocation.room_id !== undefined && invocation.room_id !== roomId) {
    return err(new ContextError("context_room_mismatch", "Invocation belongs to another room"));
  }
  const options: NormaliseOptions = { maxEventCharacters: eventCap(limits), latestTimestamp: invocation.origin_server_ts };
  if (normaliseMessage(invocation, options) === null) {
    return err(new ContextError("context_invalid_invocation", "Invocation is not a usable text message"));
  }
  const rootId = threadRootOf(invocation);
  const gathered = await gather(request, rootId);
  if (!gathered.ok) return gathered;
  const { history, state, root, pages } = gathered.value;

  const pool = normaliseEvents([...history, invocation], options);
  const invocationTurn = pool.get(invocation.event_id) ?? normaliseMessage(invocation, options);
  if (invocationTurn === null) return err(new ContextError("context_invalid_invocation", "Invocation is not a usable text message"));
  const threadRoot = rootTurn(root, options, roomId);
  if (threadRoot !== null) pool.set(threadRoot.eventId, threadRoot);
  // Main timeline: thread-internal messages are left out; thread roots stay.
  const candidates = [...pool.values()].filter(
    (t) => t.eventId !== invocation.event_id && t.eventId !== rootId && (rootId !== null || t.threadRoot === null),
  );
  const selection = selectTurns(invocationTurn, candidates, threadRoot, limits);

  const fetchedIds = new Set([...history.map((e) => e.event_id), invocation.event_id]);
  const replies = await resolveReplies(selection.turns, {
    history: request.history, roomId, signal, maxDepth: limits.max_reply_depth, budget: selection.remaining,
    pool, fetchedIds, normalise: (event) => normaliseEvents([event], options).get(event.event_id) ?? null,
  });
  if (!replies.ok) return replies;

  const block = renderBlock({
    roomId, threadRootId: rootId, threadRootUnavailable: rootId !== null && threadRoot === null,
    turns: selection.turns, invocationId: invocation.event_id, selfUserId: request.selfUserId,
    names: displayNames(state, history), replies: replies.value.refs,
  });
  const characters = selection.characters + replies.value.characters;
  request.log.info("context_built", {
    room_id_hash: roomHash(roomId), invocation_id: invocationHash(invocation.event_id), thread: rootId !== null,
    messages: selection.turns.length, characters, pages, reply_fetches: replies.value.fetches,
  });
  return ok({ block, messageCount: selection.turns.length, characters, thread: rootId === null ? null : { rootId } });
}
