// The transcript event kinds a client receives (replay, snapshots,
// subscriptions), with their metadata and payload shapes. Owner-journal rows
// (turn_state, lease_*, interaction_*, …) never reach a client.
import type { Infer, Schema } from "./schema.ts";
import { bool, id, int, list, nullable, obj, oneOfValues, str } from "./schema.ts";
import type { ThreadEvent } from "./sdk-types.ts";
import { ERROR_CODE, TURN_STATE } from "./shapes.ts";
import { TOKEN_FIGURES } from "./methods-lifecycle.ts";

/** One transcript event kind. */
export interface EventKindContract {
  readonly summary: string;
  readonly metadata: Schema;
  readonly payload?: Schema;
}

const TEXT = obj({ text: str() }, ["text"]);
const ENVELOPE = obj({
  envelope: obj({
    toolCallId: str(), title: nullable(str()), kind: nullable(str()), status: nullable(str()),
    locations: list(str(), 1024), command: nullable(str()),
  }, ["toolCallId", "title", "kind", "status", "locations", "command"]),
}, ["envelope"]);
const MESSAGE_ID = nullable(str());
const TOOL_META = { toolCallId: str(), kind: nullable(str()), status: nullable(str()) };

/** Every transcript event kind. */
export const EVENT_KINDS = {
  user_prompt: { summary: "the turn's prompt", metadata: obj({}), payload: TEXT },
  text: { summary: "a chunk of the agent's authored reply (messageId groups chunks)", metadata: obj({ messageId: MESSAGE_ID }), payload: TEXT },
  reasoning: { summary: "a chunk of the agent's reasoning, never part of the reply", metadata: obj({ messageId: MESSAGE_ID }), payload: TEXT },
  message_completed: { summary: "a text or reasoning message ended", metadata: obj({ channel: oneOfValues(["text", "reasoning"] as const), messageId: MESSAGE_ID }, ["channel"]) },
  tool_begin: { summary: "the agent started a tool call", metadata: obj(TOOL_META, ["toolCallId"]), payload: ENVELOPE },
  tool_end: { summary: "a tool call settled", metadata: obj({ ...TOOL_META, settled: bool() }, ["toolCallId", "settled"]), payload: ENVELOPE },
  diagnostic: { summary: "the agent's own notice (e.g. Codex's \"Model metadata … not found\"): for the application to show, never part of the reply", metadata: obj({ severity: str({ pattern: "^[a-z]{1,16}$" }) }, ["severity"]), payload: TEXT },
  omission: { summary: "an entry redaction could not keep (too large, or its identity was redacted)", metadata: obj({ omittedKind: str(), reason: oneOfValues(["payload_too_large", "identity_redacted"] as const), marker: str() }, ["omittedKind", "reason", "marker"]) },
  thread_created: { summary: "the thread was created", metadata: obj({ configVersion: int(1) }, ["configVersion"]) },
  thread_configured: { summary: "the thread's configuration changed", metadata: obj({ configVersion: int(1) }, ["configVersion"]) },
  interaction_requested: { summary: "the agent asks the application a question (an approval or structured input) that waits for interactions.respond; its options are in turns.get", metadata: obj({ interactionId: id(), category: oneOfValues(["execution", "structured_input"] as const), deadlineAt: int(0) }, ["interactionId", "category", "deadlineAt"]) },
  token_usage: { summary: "the token usage the agent reported for the turn so far (input includes cached input; the newest report is the turn's usage); figures only, kept under metadata-only retention", metadata: TOKEN_FIGURES },
  turn_outcome: { summary: "the turn stopped running: completed, failed, cancelled, or a lost outcome (interrupted, submission_unknown) awaiting the owner", metadata: obj({ state: TURN_STATE, errorCode: nullable(ERROR_CODE) }, ["state", "errorCode"]) },
  // History controls (P-HIS).
  thread_forked: { summary: "this thread is a fork: its agent history is the source's through afterTurnId (replay the source for it)", metadata: obj({ sourceThreadId: id(), afterTurnId: id(), commandId: id() }, ["sourceThreadId", "afterTurnId", "commandId"]) },
  turn_rolled_back: { summary: "threads.rollback took this event's turn out of the agent's context for later turns; its entries stay in the journal", metadata: obj({ commandId: id() }, ["commandId"]) },
  thread_rolled_back: { summary: "threads.rollback: the last `turns` completed turns left the agent's context; keptThroughTurnId is the last turn it keeps (null: none)", metadata: obj({ commandId: id(), turns: int(1), keptThroughTurnId: nullable(id()) }, ["commandId", "turns", "keptThroughTurnId"]) },
  turn_steered: { summary: "turns.steer: input added to this running turn (delivery follows in the owner journal)", metadata: obj({ commandId: id() }, ["commandId"]), payload: TEXT },
  compaction_requested: { summary: "threads.compact: the agent compacts the context at the start of the thread's next turn", metadata: obj({ commandId: id() }, ["commandId"]) },
  context_compacted: { summary: "the agent compacted the thread's context in this turn (asked for with threads.compact, or on its own)", metadata: obj({}) },
} as const satisfies Readonly<Record<string, EventKindContract>>;

/** A transcript event kind of the contract. */
export type EventKind = keyof typeof EVENT_KINDS;

type PayloadOf<K extends EventKind> = (typeof EVENT_KINDS)[K] extends { readonly payload: infer P } ? Infer<P> : never;

/** An event of one kind, its metadata and payload typed. */
export type EventOf<K extends EventKind> = Omit<ThreadEvent, "kind" | "metadata" | "payload"> & {
  readonly kind: K;
  readonly metadata: Infer<(typeof EVENT_KINDS)[K]["metadata"]>;
  readonly payload?: PayloadOf<K>;
};

/** Narrows an event to one kind (the contract fixes its shape). */
export function isEventOf<K extends EventKind>(event: ThreadEvent, kind: K): event is ThreadEvent & EventOf<K> {
  return event.kind === kind;
}
