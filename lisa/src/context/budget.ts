import type { ContextConfig } from "../config/types.ts";
import type { Turn } from "./types.ts";

// Budgeting, in this order: events arrive already capped
// at the per-event limit; the invocation is always kept; preceding turns are
// added newest to oldest while both the event count and character budget
// remain (stopping at the first that does not fit, so the window stays
// contiguous); the result is chronological. In a thread the root is reserved
// right after the invocation because it frames every later reply.

/** The turns chosen for the block and what they cost. */
export interface Selection {
  /** Chronological: thread root (if kept), history, invocation last. */
  readonly turns: readonly Turn[];
  /** Characters used by the selected bodies. */
  readonly characters: number;
  /** Characters left for reply excerpts. */
  readonly remaining: number;
}

/** Effective per-event cap: never more than the whole context budget. */
export function eventCap(limits: ContextConfig): number {
  return Math.min(limits.max_event_characters, limits.max_characters);
}

/** Selects turns under `max_events` and `max_characters`. */
export function selectTurns(invocation: Turn, history: readonly Turn[], root: Turn | null, limits: ContextConfig): Selection {
  let characters = invocation.length;
  let count = 1;
  const fits = (turn: Turn): boolean => count < limits.max_events && characters + turn.length <= limits.max_characters;
  let keptRoot: Turn | null = null;
  if (root !== null && fits(root)) {
    keptRoot = root;
    characters += root.length;
    count += 1;
  }
  const newestFirst: Turn[] = [];
  for (let i = history.length - 1; i >= 0; i -= 1) {
    const turn = history[i];
    if (turn === undefined || !fits(turn)) break;
    newestFirst.push(turn);
    characters += turn.length;
    count += 1;
  }
  const turns = [...(keptRoot === null ? [] : [keptRoot]), ...newestFirst.reverse(), invocation];
  return { turns, characters, remaining: Math.max(0, limits.max_characters - characters) };
}
