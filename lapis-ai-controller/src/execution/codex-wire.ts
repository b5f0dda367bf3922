// The part of the Codex app-server protocol this executor relies on, written
// down once: method names, the fields read or sent, and the closed value sets.
// The wire-shape test generates the installed Codex's own JSON schema and
// checks every entry here against it, so an upgrade that changes one of these
// shapes fails in CI instead of at a user's turn.

/** Client -> server requests the executor sends. */
export const CLIENT_REQUESTS = [
  "initialize", "thread/start", "thread/resume", "turn/start", "turn/interrupt",
  // History cuts, steering and compaction (threads.fork, threads.rollback, turns.steer, threads.compact).
  "thread/fork", "thread/revert", "turn/steer", "thread/compact/start",
] as const;

/** Client -> server notifications the executor sends. */
export const CLIENT_NOTIFICATIONS = ["initialized"] as const;

/** Server -> client notifications the executor reads. */
export const SERVER_NOTIFICATIONS = [
  "turn/started", "turn/completed", "item/started", "item/completed",
  "item/agentMessage/delta", "item/reasoning/summaryTextDelta", "item/reasoning/textDelta",
  "item/commandExecution/outputDelta", "thread/tokenUsage/updated", "warning", "configWarning", "error",
] as const;

/** Server -> client requests the executor answers with more than an error. */
export const SERVER_REQUESTS = ["item/commandExecution/requestApproval", "item/fileChange/requestApproval", "mcpServer/elicitation/request"] as const;

/** Properties the executor sends or reads, per schema definition. */
export const RELIED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  InitializeParams: ["clientInfo", "capabilities"],
  ClientInfo: ["name", "title", "version"],
  ThreadStartParams: ["cwd", "approvalPolicy", "sandbox", "config"],
  ThreadResumeParams: ["threadId", "cwd", "approvalPolicy", "sandbox", "config"],
  ThreadStartResponse: ["thread"],
  ThreadResumeResponse: ["thread"],
  Thread: ["id"],
  TurnStartParams: ["threadId", "input"],
  TurnStartResponse: ["turn"],
  TurnInterruptParams: ["threadId", "turnId"],
  Turn: ["id", "status", "error"],
  TurnError: ["message"],
  TurnStartedNotification: ["threadId", "turn"],
  TurnCompletedNotification: ["threadId", "turn"],
  ItemStartedNotification: ["threadId", "turnId", "item"],
  ItemCompletedNotification: ["threadId", "turnId", "item"],
  AgentMessageDeltaNotification: ["threadId", "turnId", "itemId", "delta"],
  ReasoningSummaryTextDeltaNotification: ["threadId", "turnId", "itemId", "delta"],
  ReasoningTextDeltaNotification: ["threadId", "turnId", "itemId", "delta"],
  CommandExecutionOutputDeltaNotification: ["threadId", "turnId", "itemId", "delta"],
  WarningNotification: ["threadId", "message"],
  ErrorNotification: ["error", "willRetry", "threadId", "turnId"],
  CommandExecutionRequestApprovalParams: ["threadId", "turnId", "itemId", "command", "cwd"],
  CommandExecutionRequestApprovalResponse: ["decision"],
  FileChangeRequestApprovalParams: ["threadId", "turnId", "itemId"],
  FileChangeRequestApprovalResponse: ["decision"],
  McpServerElicitationRequestResponse: ["action", "content"],
  ThreadForkParams: ["threadId", "lastTurnId", "cwd", "approvalPolicy", "sandbox", "config", "excludeTurns"],
  ThreadForkResponse: ["thread"],
  ThreadRevertParams: ["threadId", "beforeTurnId"],
  ThreadCompactStartParams: ["threadId"],
  TurnSteerParams: ["threadId", "expectedTurnId", "input"],
  TurnSteerResponse: ["turnId"],
};

/** The item Codex records when it compacted a thread's context (asked for, or on its own). */
export const COMPACTION_ITEM_TYPE = "contextCompaction";

/** The reasoning item's fields read when it completed without a streamed delta (its raw text parts, else its summary parts). */
export const REASONING_ITEM_FIELDS = ["id", "summary", "content"] as const;

/** The text user input the executor sends: `{type: "text", text, text_elements}`. */
export const TEXT_INPUT_FIELDS = ["type", "text", "text_elements"] as const;

/** Closed string sets the executor maps exhaustively (checked for equality, not inclusion). */
export const TURN_STATUSES = ["completed", "interrupted", "failed", "inProgress"] as const;
export const ELICITATION_ACTIONS = ["accept", "decline", "cancel"] as const;
/** String decisions of both approval kinds (command approvals also have object-valued amendments, not offered here). */
export const APPROVAL_DECISIONS = ["accept", "acceptForSession", "decline", "cancel"] as const;
export const SANDBOX_MODES = ["read-only", "workspace-write", "danger-full-access"] as const;

/** Item types whose start and completion become tool envelopes. */
export const TOOL_ITEM_TYPES = ["commandExecution", "fileChange", "mcpToolCall", "dynamicToolCall", "webSearch"] as const;

/** The elicitation modes, read from `mode`. */
export const ELICITATION_MODES = ["form", "url"] as const;

export type TurnStatus = (typeof TURN_STATUSES)[number];
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];
export type SandboxMode = (typeof SANDBOX_MODES)[number];
