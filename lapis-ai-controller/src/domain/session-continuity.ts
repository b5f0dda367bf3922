// What the transcript says about a turn's native session (issue 25 point 5):
// a reopened session is an owner-journal fact; a session that replaced the
// thread's stored one is an explicit `context_reset` transcript event, so an
// application (and its user) learns the agent no longer remembers the thread
// instead of the conversation starting over silently.
import type { SessionContinuity } from "./executor-port.ts";
import type { EngineStore, TurnRecord } from "./turn-store-port.ts";

/** Journals the continuity of a turn's session; call inside the dispatch-boundary transaction. */
export function recordContinuity(store: EngineStore, turn: TurnRecord, continuity: SessionContinuity): void {
  if (continuity.kind === "resumed") {
    store.append({ threadId: turn.threadId, turnId: turn.id, type: "session_resumed", visibility: "owner", data: { method: continuity.method } });
  } else if (continuity.kind === "cut") {
    // threads.fork / threads.rollback took effect: how the agent's history was cut (P-HIS-02/03).
    store.append({ threadId: turn.threadId, turnId: turn.id, type: "history_cut", visibility: "owner", data: { method: continuity.method } });
  } else if (continuity.kind === "reset") {
    store.append({ threadId: turn.threadId, turnId: turn.id, type: "context_reset", visibility: "transcript", data: { reason: continuity.reason } });
  }
}
