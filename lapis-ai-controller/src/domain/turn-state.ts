// The turn state machine (plan 4.1 item 3):
// queued -> preparing -> dispatched -> running <-> waiting -> terminal, plus
// cancelling. `interrupted` and `submission_unknown` are the two "lost outcome"
// states: they fence their workspace until an owner resolves them.

import { TURN_STATES, type TurnState } from "./records.ts";

/** A turn state (the list is records.ts TURN_STATES). */
export type { TurnState };

const NEXT: Record<TurnState, readonly TurnState[]> = {
  queued: ["preparing", "cancelled", "failed"],
  preparing: ["dispatched", "failed", "cancelled", "queued"],
  dispatched: ["running", "completed", "failed", "cancelled", "cancelling", "interrupted", "submission_unknown"],
  running: ["waiting", "cancelling", "completed", "failed", "cancelled", "interrupted"],
  waiting: ["running", "cancelling", "completed", "failed", "cancelled", "interrupted"],
  cancelling: ["cancelled", "completed", "failed", "interrupted"],
  completed: [],
  failed: [],
  cancelled: [],
  interrupted: ["failed", "cancelled"],
  submission_unknown: ["failed", "cancelled"],
};

/** True when the machine allows `from -> to`. */
export function canTransition(from: TurnState, to: TurnState): boolean {
  return NEXT[from].includes(to);
}

/** Final states: nothing moves a turn out of them. */
export function isFinal(s: TurnState): boolean {
  return s === "completed" || s === "failed" || s === "cancelled";
}

/** Lost-outcome states that fence their workspace across restarts. */
export function isFencing(s: TurnState): boolean {
  return s === "interrupted" || s === "submission_unknown";
}

/** States where work is in flight (the thread is busy). */
export function isActive(s: TurnState): boolean {
  return s === "preparing" || s === "dispatched" || s === "running" || s === "waiting" || s === "cancelling";
}

/** True for states after the persisted dispatch boundary that still run. */
export function isDispatchedLive(s: TurnState): boolean {
  return s === "dispatched" || s === "running" || s === "waiting" || s === "cancelling";
}

/** Checks a value read from storage or the wire. */
export function isTurnState(v: unknown): v is TurnState {
  return typeof v === "string" && (TURN_STATES as readonly string[]).includes(v);
}
