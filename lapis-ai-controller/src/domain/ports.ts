// Narrow ports the domain depends on. Persistence implements the store ports
// (one accessor file per table under src/persistence/); tests may pass fakes.
// Every store method is synchronous: SQLite transactions stay short and never
// span a network or provider call.

import type { ControllerError, Result } from "./errors.ts";
import type {
  AuditRecord,
  CommandRecord,
  InteractionRecord,
  JournalMetadata,
  JournalRecord,
  JournalVisibility,
  Json,
  PreparationMarkerRecord,
  ProviderSessionRecord,
  RetentionProfile,
  ThreadRecord,
  TurnRecord,
  TurnState,
  WorkspaceLeaseRecord,
} from "./records.ts";

/** Wall-clock time in epoch milliseconds; tests pass a controllable clock. */
export interface Clock {
  now(): number;
}

/** The real clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** Runs `work` in one short `BEGIN IMMEDIATE` transaction; `work` must be synchronous (no awaits inside). */
export interface Transactor {
  transact<T>(work: () => T): T;
}

/** Threads (one row per conversation). */
export interface ThreadStore {
  insert(thread: ThreadRecord): Result<ThreadRecord>;
  get(threadId: string): ThreadRecord | undefined;
  /** Replaces config under the optimistic version: fails `version_conflict` when `expectedVersion` is stale. */
  updateConfig(threadId: string, expectedVersion: number, config: ThreadRecord["config"], at: number): Result<ThreadRecord>;
}

/** Turns. */
export interface TurnStore {
  insert(turn: TurnRecord): Result<TurnRecord>;
  get(turnId: string): TurnRecord | undefined;
  listByThread(threadId: string): readonly TurnRecord[];
  listByState(states: readonly TurnState[]): readonly TurnRecord[];
  /**
   * Moves a turn to `state` along the transition table (`turn_transition_invalid` otherwise); `errorCode` must be a short snake_case code (P-STO-08).
   * `read`: the turn's row as the caller read it inside the same open transaction, so it is not read again (P-PRF-14).
   */
  setState(turnId: string, state: TurnState, at: number, errorCode?: string | null, read?: TurnRecord): Result<TurnRecord>;
}

/** Accepted commands, for idempotency on command identity. */
export interface CommandStore {
  insert(command: CommandRecord): Result<CommandRecord>;
  get(principal: string, application: string, commandId: string): CommandRecord | undefined;
}

/** What a caller appends to the journal; the store assigns order and sequence. */
export interface JournalAppend {
  readonly threadId: string;
  readonly turnId: string | null;
  readonly visibility: JournalVisibility;
  readonly kind: string;
  readonly messageId?: string | null;
  /** Content; retained only under `full`, kept volatile under `metadata-only`. */
  readonly payload?: Json;
  readonly metadata?: JournalMetadata;
  readonly createdAt: number;
}

/** One replayed transcript event: its payload, or an explicit `payloadUnavailable` marker. */
export interface ReplayEvent {
  readonly seq: number;
  readonly turnId: string | null;
  readonly kind: string;
  readonly messageId: string | null;
  readonly metadata: JournalMetadata;
  readonly createdAt: number;
  readonly payload?: Json;
  /** Present (true) when the payload was volatile and is gone (P-STO-13). */
  readonly payloadUnavailable?: true;
}

/** A replay page. `complete` is never true when any payload of the page is missing (P-STO-16). */
export interface ReplayResult {
  readonly events: readonly ReplayEvent[];
  readonly complete: boolean;
  /** `transcript_unavailable` when a volatile payload of the page was lost (P-STO-15). */
  readonly unavailable: ControllerError | null;
}

/** The ordered owner journal and the public transcript view over it. */
export interface JournalStore {
  append(entry: JournalAppend): Result<JournalRecord>;
  /**
   * One page of public transcript rows of a thread with `seq > afterSeq`, at
   * most `limit` (capped in code), payloads resolved from storage or volatile
   * capture; a lost payload marks its own row only.
   */
  replay(threadId: string, afterSeq?: number, limit?: number): ReplayResult;
  /** Every row (transcript and owner metadata) with `journalId > afterJournalId`, in journal order, payloads omitted. */
  ownerJournal(afterJournalId?: number, limit?: number): readonly JournalRecord[];
  /** The highest transcript sequence of a thread (0 when none). */
  lastSeq(threadId: string): number;
  /** The metadata of the thread's latest owner row of `kind` with no turn (progress facts such as `transcript_stored`), or undefined. */
  lastThreadFact(threadId: string, kind: string): JournalRecord["metadata"] | undefined;
}

/** Interactions. */
export interface InteractionStore {
  insert(interaction: InteractionRecord): Result<InteractionRecord>;
  get(interactionId: string): InteractionRecord | undefined;
  listByTurn(turnId: string): readonly InteractionRecord[];
  /** Settles a pending interaction once; a terminal one answers `interaction_closed`. */
  settle(
    interactionId: string,
    update: Pick<InteractionRecord, "state" | "outcome" | "decidedBy"> & { readonly settledAt: number },
  ): Result<InteractionRecord>;
}

/** Workspace leases and fences. */
export interface LeaseStore {
  get(workspaceId: string): WorkspaceLeaseRecord | undefined;
  /** Takes a free workspace; `turn_fenced` or `turn_active` when it is held. */
  acquire(lease: WorkspaceLeaseRecord): Result<WorkspaceLeaseRecord>;
  /** Turns a lease into a fence (lost outcome) or sets its confirmation deadline. */
  update(workspaceId: string, turnId: string, change: Pick<WorkspaceLeaseRecord, "kind" | "confirmDeadlineAt">): Result<WorkspaceLeaseRecord>;
  release(workspaceId: string, turnId: string): Result<void>;
}

/** Native provider sessions. */
export interface ProviderSessionStore {
  get(threadId: string, provider: string): ProviderSessionRecord | undefined;
  /** Binds (or replaces) the native session of a thread and provider. */
  bind(session: ProviderSessionRecord): Result<ProviderSessionRecord>;
}

/** The audit table. */
export interface AuditStore {
  record(entry: Omit<AuditRecord, "auditId">): Result<AuditRecord>;
  list(afterAuditId?: number, limit?: number): readonly AuditRecord[];
}

/** Preparation markers (one per prepared turn). */
export interface PreparationMarkerStore {
  insert(marker: PreparationMarkerRecord): Result<PreparationMarkerRecord>;
  get(turnId: string): PreparationMarkerRecord | undefined;
}

/** The store as a whole: the retention default, transactions, and the table ports. */
export interface Store extends Transactor {
  readonly retention: RetentionProfile;
  readonly threads: ThreadStore;
  readonly turns: TurnStore;
  readonly commands: CommandStore;
  readonly journal: JournalStore;
  readonly interactions: InteractionStore;
  readonly leases: LeaseStore;
  readonly providerSessions: ProviderSessionStore;
  readonly audit: AuditStore;
  readonly preparationMarkers: PreparationMarkerStore;
  close(): void;
}
