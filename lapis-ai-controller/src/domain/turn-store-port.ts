// The durable store the turn engine needs (implemented over the schema v1
// table accessors by persistence/engine-store.ts). Every method is one short
// synchronous operation; `tx` groups several into one transaction so a state
// change, its lease change and its journal entry commit together.
import type { PreparedApproval, ApprovalPolicy } from "./approval-policy.ts";
import type { HistoryCut, NativeModeRecord, ResumeHint } from "./executor-port.ts";
import type { TurnState } from "./turn-state.ts";

/** Retention profile of a thread. */
export type Retention = "full" | "metadata-only";

/** A thread and its optimistic-versioned configuration. */
export type ThreadRecord = {
  id: string;
  principal: string;
  application: string;
  workspaceId: string;
  providerId: string;
  restricted: boolean;
  approvalPolicy: ApprovalPolicy;
  requestedMode: string | null;
  retention: Retention;
  configVersion: number;
};

/** The configuration a turn runs with, fixed when it is accepted (P-TRN-12). */
export type PreparedConfig = {
  configVersion: number;
  retention: Retention;
  providerId: string;
  restricted: boolean;
  requestedMode: string | null;
  approval: PreparedApproval;
  /** Filled at preparation from what the provider reported (P-ARC-02). */
  nativeMode: NativeModeRecord | null;
};

/** One turn. */
export type TurnRecord = {
  id: string;
  threadId: string;
  commandId: string;
  attemptOf: string | null;
  state: TurnState;
  workspaceId: string;
  config: PreparedConfig;
  errorCode: string | null;
};

/** Interaction states; only `pending` may change, exactly once. */
export type InteractionState = "pending" | "settled" | "expired" | "cancelled" | "closed";

/** One provider interaction (permission request). */
export type InteractionRecord = {
  id: string;
  turnId: string;
  nativeRequestId: string;
  category: "execution" | "structured_input";
  /** The exact option ids offered (P-TRN-10). */
  optionIds: string[];
  state: InteractionState;
  optionId: string | null;
  decidedBy: "client" | "policy" | "host" | null;
  deadlineAt: number;
};

/**
 * An entry of the ordered owner journal. `transcript` entries are public.
 * Scalar data is retained metadata; text and structured data are payload,
 * volatile under metadata-only retention (`payloadUnavailable` once lost).
 */
export type JournalEntry = {
  /** Global journal order. */
  seq: number;
  threadId: string;
  turnId: string | null;
  type: string;
  visibility: "owner" | "transcript";
  data: Record<string, unknown>;
  payloadUnavailable?: boolean;
};

/** A workspace lease: `active` for the running turn, `fenced` after a lost outcome. */
export type LeaseRecord = { workspaceId: string; turnId: string; state: "active" | "fenced" };

/** An audit row. */
export type AuditRecord = { actor: string; action: string; turnId: string; data: Record<string, unknown> };

/** The store port of the turn engine. */
export type EngineStore = {
  tx<T>(fn: () => T): T;
  now(): number;
  getThread(id: string): ThreadRecord | null;
  /** Inserts a turn, its accepted configuration and its prompt (payload). */
  insertTurn(t: TurnRecord, prompt: string): TurnRecord;
  getTurn(id: string): TurnRecord | null;
  listTurns(filter: { states?: readonly TurnState[]; workspaceId?: string; threadId?: string }): TurnRecord[];
  /** Compare-and-set of the state; returns false when the turn was not in `from`. */
  setTurnState(id: string, from: readonly TurnState[], to: TurnState, patch?: { errorCode?: string | null }): boolean;
  /** Records the preparation marker (with the native-mode result) at the dispatch boundary. */
  setTurnConfig(id: string, config: PreparedConfig): void;
  getPrompt(turnId: string): string | null;
  getLease(workspaceId: string): LeaseRecord | null;
  /** Inserts an active lease; false when the workspace already has one. */
  acquireLease(workspaceId: string, turnId: string): boolean;
  releaseLease(workspaceId: string, turnId: string): boolean;
  fenceLease(workspaceId: string, turnId: string): void;
  append(e: Omit<JournalEntry, "seq">): number;
  /**
   * Appends an agent event with group commit: redacted and stamped now,
   * committed with the others that arrive before the next macrotask (or at
   * once when the batch is full, or by the next `tx`, which commits the queue
   * first). Subscribers hear of it only after that commit.
   */
  appendGrouped(e: Omit<JournalEntry, "seq">): void;
  /** Lets the redactor ask about the strings the next appends carry in one scan (EntryRedactor.prescan); decides nothing. */
  prescan?(texts: readonly string[]): void;
  /** Posts that scan without waiting (EntryRedactor.prefetch), before a request's checks; decides nothing. */
  prefetch?(texts: readonly string[]): void;
  /**
   * Queues a small write with the agent's events (group commit): it commits
   * with them, in arrival order, and nothing reads it before then. For a state
   * change nobody waits on, such as `dispatched -> running`.
   */
  txGrouped(fn: () => void): void;
  /** Commits the queued events now: a barrier before an answer leaves for the agent or an application. */
  flush(): void;
  /** Inside a transaction: runs `fn` once that transaction has committed, never after a rollback. */
  afterCommit(fn: () => void): void;
  /** Entries in order; `kinds` (non-empty) keeps only those kinds, read and decoded in SQL's filter. */
  journal(filter: { threadId?: string; turnId?: string; afterSeq?: number; kinds?: readonly [string, ...string[]] }): JournalEntry[];
  insertInteraction(i: InteractionRecord): void;
  getInteraction(id: string): InteractionRecord | null;
  listInteractions(turnId: string): InteractionRecord[];
  /** Settles a pending interaction once; false when it was no longer pending. */
  settleInteraction(id: string, to: Exclude<InteractionState, "pending">, optionId: string | null, decidedBy: InteractionRecord["decidedBy"]): boolean;
  insertAudit(a: AuditRecord): void;
  /** Binds the thread's native session and the binding key it was opened under. */
  setProviderSession(threadId: string, providerId: string, nativeSessionId: string, bindingKey: string, pending?: { cut?: HistoryCut; compact?: boolean }): void;
  /** The stored native session, offered to the next agent process for resumption (issue 25 point 5). */
  getProviderSession(threadId: string, providerId: string): ResumeHint | null;
};
