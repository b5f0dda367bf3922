// Transcript capture: executor events become journal rows. Authored text,
// reasoning, message completion markers (P-PRV-06) and the merged tool
// invocation envelope (P-CAP-06/07) and the agent's own notices (diagnostic,
// shown to the application, never part of the reply) are transcript; mode updates and unknown
// agent requests are owner metadata. Identities (message id, tool call id,
// settled flag) are scalar metadata, so they survive loss of volatile payloads.
import type { ExecutorEvent } from "./executor-port.ts";
import type { EngineStore, TurnRecord } from "./turn-store-port.ts";

const TRANSCRIPT = new Set(["text", "reasoning", "message_completed", "tool_begin", "tool_end", "diagnostic", "token_usage"]);

/** The journal data of one event: scalar identities plus its payload fields. */
export function eventData(e: ExecutorEvent): Record<string, unknown> {
  switch (e.type) {
    case "tool_begin":
      return { toolCallId: e.envelope.toolCallId, kind: e.envelope.kind, status: e.envelope.status, envelope: e.envelope };
    case "tool_end":
      return { toolCallId: e.envelope.toolCallId, kind: e.envelope.kind, status: e.envelope.status, settled: e.settled, envelope: e.envelope };
    default: {
      const { type: _type, ...rest } = e;
      return rest as Record<string, unknown>;
    }
  }
}

/**
 * Appends one executor event of a turn to the journal, group-committed with
 * the events that arrive with it: every later state change, interaction or
 * receipt commits it first, and no subscriber sees it before its commit.
 */
export function captureEvent(store: EngineStore, turn: TurnRecord, e: ExecutorEvent): void {
  const visibility = TRANSCRIPT.has(e.type) ? "transcript" : "owner";
  store.appendGrouped({ threadId: turn.threadId, turnId: turn.id, type: e.type, visibility, data: eventData(e) });
}
