// The Executor port: where ai-host would plug in. Its inputs deliberately carry
// no AuthSession, scope or token (P-API-10): execution never sees controller
// users, only what one provider turn needs.

/** Outcome of ACP native-mode selection, never inferred from the request. */
export type NativeModeResult = "applied" | "unsupported" | "rejected" | "unreported";

/** The recorded native-mode fact of one prepared session. */
export type NativeModeRecord = { requested: string | null; result: NativeModeResult; current: string | null };

/** A validated, non-secret git identity the provider binds (P-PRV-04/05). */
export type VcsIdentity = { name: string; email: string };

/** What the executor needs to set up a provider session. */
export type SessionSetup = {
  /** Stable key of the logical session (thread + provider). */
  sessionKey: string;
  /** The thread the session serves; lets the service grant that thread's application tools (issue 15). */
  threadId?: string;
  providerId: string;
  cwd: string;
  restricted: boolean;
  requestedMode: string | null;
  vcsIdentity: VcsIdentity | null;
  /** Private runtime env grants (values never persisted). */
  envGrants: Readonly<Record<string, string>>;
  /** The thread's stored native session, offered for resumption (issue 25 point 5). */
  resume?: ResumeHint | null;
};

/** A native session stored for a thread and provider; `bindingKey` null for rows older than the key. */
export type ResumeHint = { nativeSessionId: string; bindingKey: string | null; cut?: HistoryCut; compact?: boolean };

/**
 * A cut of the agent's history (threads.fork, threads.rollback), stored with the thread's native session and
 * applied by the next setup. Native Codex: `thread/fork` through `throughNativeTurnId` (a fork), or
 * `thread/revert` before `beforeNativeTurnId` (a rollback; null: no dropped turn reached this native thread).
 * An executor without either opens a new session, which the engine seeds with the kept transcript.
 */
export type HistoryCut =
  | { kind: "fork"; throughNativeTurnId: string | null }
  | { kind: "rollback"; beforeNativeTurnId: string | null };

/** What an executor offers a provider's threads beyond turns (threads.fork/rollback, turns.steer, threads.compact). */
export type ExecutorCapabilities = {
  /** `native`: the agent cuts its own history; `seed`: a new session is seeded from the controller's transcript. */
  history: "native" | "seed";
  steer: boolean;
  compact: boolean;
};

/** Why a thread's previous native context could not be carried into a new session. */
export type ContextResetReason = "resume_unsupported" | "resume_failed" | "session_binding_changed";

/** How a prepared session relates to the thread's previous native session. */
export type SessionContinuity =
  /** The thread had no native session before. */
  | { kind: "new" }
  /** The live session of an earlier turn was reused. */
  | { kind: "continued" }
  /** The stored native session was reopened in a new agent process (ACP methods, or the native Codex thread/resume). */
  | { kind: "resumed"; method: "session/resume" | "session/load" | "thread/resume" }
  /** A fresh session replaced the stored one: the agent lost the thread's context. */
  | { kind: "reset"; reason: ContextResetReason }
  /** A history cut was applied: by the agent itself (thread/fork, thread/revert), or by seeding a new session. */
  | { kind: "cut"; method: "thread/fork" | "thread/revert" | "seeded" };

/** Application context given to the agent ahead of the prompt, in binding order (issue 25 point 1). */
export type ContextBlock = { source: string; text: string };

/** Tool invocation envelope merged from start and update frames (P-CAP-06/07). */
export type ToolEnvelope = {
  toolCallId: string;
  title: string | null;
  kind: string | null;
  status: string | null;
  locations: string[];
  command: string | null;
};

/** One permission option offered by the provider, with its exact id. */
export type PermissionOptionOffer = { optionId: string; name: string; kind: string };

/** A provider permission request bound to its native JSON-RPC id. */
export type PermissionAsk = {
  nativeRequestId: string;
  toolCallId: string;
  toolKind: string | null;
  /** "execution" for tool approvals; "structured_input" never auto-approves. */
  category: "execution" | "structured_input";
  options: PermissionOptionOffer[];
};

/** The decision returned to the provider for one permission request. */
export type PermissionDecision = { outcome: "selected"; optionId: string } | { outcome: "cancelled" };

/** Events an executor reports while a turn runs. */
export type ExecutorEvent =
  | { type: "text"; messageId: string | null; text: string }
  | { type: "reasoning"; messageId: string | null; text: string }
  | { type: "message_completed"; channel: "text" | "reasoning"; messageId: string | null }
  | { type: "tool_begin"; envelope: ToolEnvelope }
  | { type: "tool_end"; envelope: ToolEnvelope; settled: boolean }
  | { type: "mode_update"; modeId: string }
  /** The agent's own notice (e.g. Codex's "Model metadata … not found"): for the application, never reply text. */
  | { type: "diagnostic"; severity: string; text: string }
  | { type: "unknown_request"; method: string }
  /** Token usage of the turn so far, as the agent reported it (figures only; journaled as metadata). */
  | { type: "token_usage"; inputTokens: number; cachedInputTokens: number | null; outputTokens: number; reasoningOutputTokens: number | null; totalTokens: number }
  /** The provider is working; nothing to journal (content is held for whole-block redaction). */
  | { type: "activity" }
  /** The agent's own id of this turn (native Codex), so a later fork or rollback can name it. */
  | { type: "native_turn"; nativeTurnId: string; nativeThreadId: string }
  /** The agent compacted the thread's context (asked for, or on its own). */
  | { type: "context_compacted" };

/** Callbacks of one dispatched turn. */
export type TurnSink = {
  event(e: ExecutorEvent): void;
  /** Resolves with the decision; rejecting leaves the provider unanswered. */
  permission(ask: PermissionAsk): Promise<PermissionDecision>;
};

/** Terminal outcome reported by the provider, or a payload-free failure code. */
export type TurnOutcome =
  | { kind: "stopped"; stopReason: string }
  | { kind: "failed"; code: string };

/** A live provider session after setup, before or during dispatch. */
export type PreparedSession = {
  readonly nativeSessionId: string;
  readonly nativeMode: NativeModeRecord;
  /** Sends the prompt (after any context blocks); call only after the dispatch boundary is durable. */
  dispatch(prompt: string, sink: TurnSink, context?: readonly ContextBlock[]): Promise<TurnOutcome>;
  /** Asks the provider to cancel; not proof of completion (P-TRN-02). */
  cancel(): void;
  /** Adds input to the running turn (native `turn/steer`); absent where the executor cannot. */
  steer?(text: string): Promise<{ ok: true } | { ok: false; code: string }>;
  /** Ends the session and its process. */
  close(): Promise<void>;
};

/** Setup result: expected failures are values. */
export type SetupResult =
  | { ok: true; session: PreparedSession; continuity: SessionContinuity; bindingKey: string }
  | { ok: false; code: string };

/** Deletes the rows naming a thread from an agent's own SQLite file (secure delete, checkpoint); the number of rows. */
export type ThreadRowEraser = (dbPath: string, threadId: string) => number;

/** A thread's session to forget (threads.delete). */
export type SessionForget = { sessionKey: string; providerId: string; nativeSessionId: string | null };

/** What forgetting a session did to the agent's own files: erased, none kept, not erasable by the controller, or failed. */
export type ForgetResult = "erased" | "none" | "unsupported" | "failed";

/** The execution port. */
export type Executor = {
  /** Closes the thread's live session and erases the agent's own files of it (absent: `unsupported`). */
  forget?(s: SessionForget): Promise<ForgetResult>;
  /** Ensures a provider session (reused when its binding is unchanged). */
  prepare(setup: SessionSetup): Promise<SetupResult>;
  /** What the provider's executor offers beyond turns; absent: seeding, no steer, no compaction. */
  capabilities?(providerId: string): ExecutorCapabilities;
  /** Closes every session and process. */
  close(): Promise<void>;
};
