import { err, ok, type Result } from "../errors.ts";
import type { HistoryPort, RawEvent } from "../matrix/port.ts";
import { countChars, truncateText } from "./text.ts";
import { abortedError, type ContextError, type Turn } from "./types.ts";

// Reply relationships: a target inside the selected context is
// referenced by sequence; otherwise, while depth remains, the target is taken
// from the fetched context or fetched by id and shown as a short excerpt,
// following its own reply chain. A visited set stops cycles; excerpts spend
// only the character budget left after the turns were selected.

/** Longest reply excerpt in code points. */
export const EXCERPT_MAX_CHARACTERS = 200;
/** Below this many remaining characters no further excerpt is added. */
export const EXCERPT_MIN_CHARACTERS = 16;
/** Hard ceiling on reply targets fetched by id for one context. */
export const REPLY_FETCH_CEILING = 24;

/** How one reply target is shown. */
export type ReplyRef =
  | { readonly kind: "sequence"; readonly eventId: string; readonly sequence: number }
  | { readonly kind: "excerpt"; readonly eventId: string; readonly author: string; readonly text: string; readonly next: ReplyRef | null }
  /** Known target not followed: depth, budget, fetch ceiling or a cycle. */
  | { readonly kind: "reference"; readonly eventId: string }
  /** Missing, malformed, redacted or cross-room target. */
  | { readonly kind: "unavailable"; readonly eventId: string };

/** Inputs of reply resolution. */
export interface ReplyScope {
  readonly history: HistoryPort;
  readonly roomId: string;
  readonly signal: AbortSignal;
  readonly maxDepth: number;
  /** Characters available for excerpts. */
  readonly budget: number;
  /** Normalised turns of the fetched context (selected or not). */
  readonly pool: ReadonlyMap<string, Turn>;
  /** Ids of every fetched event, message or not. */
  readonly fetchedIds: ReadonlySet<string>;
  /** Normalises an event fetched by id (null when unusable). */
  readonly normalise: (event: RawEvent) => Turn | null;
}

/** Reply metadata per replying turn and what it cost. */
export interface ResolvedReplies {
  readonly refs: ReadonlyMap<string, ReplyRef>;
  readonly characters: number;
  readonly fetches: number;
}

type Lookup = Turn | "unavailable" | "skipped";

/** Resolves reply targets of `turns` (chronological), newest first so recent replies get the budget. */
export async function resolveReplies(turns: readonly Turn[], scope: ReplyScope): Promise<Result<ResolvedReplies, ContextError>> {
  const sequences = new Map(turns.map((t, i) => [t.eventId, i + 1]));
  const cache = new Map<string, Turn | "unavailable">();
  let remaining = scope.budget;
  let fetches = 0;

  const lookup = async (eventId: string): Promise<Result<Lookup, ContextError>> => {
    const known = scope.pool.get(eventId) ?? cache.get(eventId);
    if (known !== undefined) return ok(known);
    if (scope.fetchedIds.has(eventId)) return ok("unavailable");
    if (fetches >= REPLY_FETCH_CEILING) return ok("skipped");
    fetches += 1;
    const fetched = await scope.history.event(scope.roomId, eventId, scope.signal);
    if (scope.signal.aborted) return err(abortedError(scope.signal));
    const event = fetched.ok ? fetched.value : null;
    const usable = event !== null && event.event_id === eventId && (event.room_id === undefined || event.room_id === scope.roomId);
    const turn = usable ? scope.normalise(event) : null;
    cache.set(eventId, turn ?? "unavailable");
    return ok(turn ?? "unavailable");
  };

  const follow = async (eventId: string, depthLeft: number, visited: Set<string>): Promise<Result<ReplyRef, ContextError>> => {
    const sequence = sequences.get(eventId);
    if (sequence !== undefined) return ok({ kind: "sequence", eventId, sequence });
    if (visited.has(eventId) || depthLeft <= 0 || remaining < EXCERPT_MIN_CHARACTERS) return ok({ kind: "reference", eventId });
    visited.add(eventId);
    const found = await lookup(eventId);
    if (!found.ok) return found;
    const target = found.value;
    if (target === "skipped") return ok({ kind: "reference", eventId });
    if (target === "unavailable" || target.redacted) return ok({ kind: "unavailable", eventId });
    const text = truncateText(target.body, Math.min(EXCERPT_MAX_CHARACTERS, remaining), "…").text;
    remaining -= countChars(text);
    let next: ReplyRef | null = null;
    if (target.replyTo !== null) {
      const chained = await follow(target.replyTo, depthLeft - 1, visited);
      if (!chained.ok) return chained;
      next = chained.value;
    }
    return ok({ kind: "excerpt", eventId, author: target.sender, text, next });
  };

  const refs = new Map<string, ReplyRef>();
  for (let i = turns.length - 1; i >= 0; i -= 1) {
    const turn = turns[i];
    if (turn === undefined || turn.replyTo === null) continue;
    const ref = await follow(turn.replyTo, scope.maxDepth, new Set([turn.eventId]));
    if (!ref.ok) return ref;
    refs.set(turn.eventId, ref.value);
  }
  return ok({ refs, characters: scope.budget - remaining, fetches });
}
