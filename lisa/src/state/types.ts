import type { InstanceLock } from "./lock.ts";
// Public shapes of the durable state ledger. All times are
// milliseconds; server times (origin_server_ts) are named as such.

/** Every invocation status, in lifecycle order. */
export const INVOCATION_STATUSES = ["candidate", "processing", "ready_to_send", "sent", "ignored"] as const;
/** One invocation status. */
export type InvocationStatus = (typeof INVOCATION_STATUSES)[number];
/** Statuses whose row still waits for work and keeps its content. */
export const PENDING_STATUSES = ["candidate", "processing", "ready_to_send"] as const;
/** Statuses after which content is cleared and the row only serves deduplication. */
export const TERMINAL_STATUSES = ["sent", "ignored"] as const;

/** How a store is opened: `run` owns the database, `readonly` only inspects it. */
export type StateStoreMode = "run" | "readonly";

/** Options of `openStateStore`. */
export interface OpenStateStoreOptions {
  readonly mode: StateStoreMode;
  /** Clock in epoch milliseconds; `Date.now` by default. */
  readonly now?: () => number;
  /** How long a statement waits for another connection's write lock; 5000 ms by default. */
  readonly busyTimeoutMs?: number;
}

/** The sync position and health stamp (singleton row). */
export interface SyncStateView {
  readonly nextBatch: string | null;
  readonly initialized: boolean;
  readonly updatedAtMs: number;
  readonly lastSuccessMs: number | null;
}

/** A room's timeline cursor and the server time of its baseline anchor. */
export interface RoomCursorView {
  readonly lastTimelineEventId: string | null;
  readonly baselineTsMs: number | null;
  readonly updatedAtMs: number;
}

/** One room of a baseline commit. */
export interface BaselineRoom {
  readonly roomId: string;
  readonly lastTimelineEventId: string | null;
  /** origin_server_ts of the room's baseline anchor (or the baseline time if the room was empty). */
  readonly baselineTsMs: number;
}

/** Input of `commitBaseline`. */
export interface BaselineInput {
  readonly nextBatch: string;
  readonly rooms: readonly BaselineRoom[];
}

/** One room cursor of a sync batch. */
export interface SyncRoomCursor {
  readonly roomId: string;
  readonly lastTimelineEventId: string | null;
  /** Set only for a room baselined inside this batch (e.g. newly allowed); otherwise kept. */
  readonly baselineTsMs?: number;
}

/** A candidate invocation seen in a sync batch. */
export interface CandidateInput {
  readonly eventId: string;
  readonly roomId: string;
  readonly senderId: string;
  /** origin_server_ts of the event. */
  readonly receivedAtMs: number;
  /** The raw event as a JSON object text; cleared once the invocation is terminal. */
  readonly rawEventJson: string;
}

/** Input of `commitSyncBatch`. */
export interface SyncBatchInput {
  readonly nextBatch: string;
  readonly rooms: readonly SyncRoomCursor[];
  readonly candidates: readonly CandidateInput[];
  /** Events redacted in this batch: matching candidates not yet leased become `ignored` (`redacted`), held ones are dropped. */
  readonly redactedEventIds?: readonly string[];
  /** Encrypted events whose room key has not arrived: held (ciphertext) until it does or their deadline passes. */
  readonly held?: readonly HeldInput[];
  /** Encrypted events that can never be decrypted: recorded as ignored with their code. */
  readonly undecryptable?: readonly UndecryptableInput[];
}

/** An encrypted event held until its room key arrives (LISA-E2EE-02); its raw event is the ciphertext as received. */
export interface HeldInput extends CandidateInput {
  /** When the wait ends and the event is given up as `decryption_failed`. */
  readonly deadlineMs: number;
}

/** A held event as stored. */
export interface HeldEvent extends HeldInput {
  readonly heldAtMs: number;
}

/** How a held event ends: a candidate (its key came and it may address Lisa), ignored with a code, or dropped (not for her). */
export type HeldOutcome =
  | { readonly kind: "candidate"; readonly candidate: CandidateInput }
  | { readonly kind: "ignored"; readonly code: string }
  | { readonly kind: "dropped" };

/** An encrypted event recorded as ignored because it cannot be decrypted. */
export interface UndecryptableInput {
  readonly eventId: string;
  readonly roomId: string;
  readonly senderId: string;
  readonly receivedAtMs: number;
  readonly code: string;
}

/** One room Lisa serves end-to-end encrypted, as `lisa status` reports it (LISA-E2EE-12). */
export interface EncryptedRoomSummary {
  readonly roomHash: string;
  readonly encryptedSinceMs: number;
  /** Replies sent there since Lisa serves it encrypted. */
  readonly served: number;
  /** Events there waiting for their room key. */
  readonly keysPending: number;
  /** Now minus the last event there that could not be decrypted; null if none. */
  readonly lastDecryptionFailureAgeMs: number | null;
}

/** One row of the invocation ledger. */
export interface InvocationRow {
  readonly eventId: string;
  readonly roomId: string;
  readonly senderId: string;
  readonly receivedAtMs: number;
  readonly status: InvocationStatus;
  readonly rawEventJson: string | null;
  readonly responseJson: string | null;
  readonly matrixTxnId: string;
  readonly sentEventId: string | null;
  readonly attemptCount: number;
  /** Earliest next action; for `processing` and a leased `ready_to_send` row, the lease expiry. */
  readonly availableAtMs: number;
  readonly lastErrorCode: string | null;
  /** Time of the row's last status transition (send leases and send failures leave it unchanged). */
  readonly updatedAtMs: number;
}

/** The next action of a room: generate a reply, or send a stored one. */
export type WorkItem =
  | { readonly kind: "process"; readonly invocation: InvocationRow }
  | { readonly kind: "send"; readonly invocation: InvocationRow };

/** Count and recency of one stored error or ignore-reason code. */
export interface ErrorCodeCount {
  readonly code: string;
  readonly count: number;
  readonly lastAtMs: number;
}

/** Queue depth and oldest pending age of one room, identified only by its hash. */
export interface RoomQueueSummary {
  readonly roomHash: string;
  readonly queueDepth: number;
  /** Now minus the oldest pending event's server timestamp (never negative). */
  readonly oldestPendingAgeMs: number;
  /** The room's active conditions (LISA-ROOMSTATE-01: a room that cannot be served holds its queue until they clear). */
  readonly conditions: readonly string[];
}

/** One active per-room condition (LISA-ROOMS-01): the room id or configured alias, its stable code, since when. */
export interface RoomConditionRow {
  readonly room: string;
  readonly code: string;
  readonly sinceMs: number;
}

/** A room condition as `lisa status` reports it. */
export interface RoomConditionSummary extends RoomConditionRow {
  readonly roomHash: string;
  readonly ageMs: number;
}

/** Content-free health summary of the ledger. */
export interface StatusSummary {
  /** `absent` when a read-only open found no database file yet. */
  readonly database: "present" | "absent";
  readonly schemaVersion: number;
  readonly generatedAtMs: number;
  readonly countsByStatus: Readonly<Record<InvocationStatus, number>>;
  /** Now minus the time the oldest `ready_to_send` reply became ready. */
  readonly oldestReadyToSendAgeMs: number | null;
  /** Now minus the server timestamp of the oldest candidate. */
  readonly oldestCandidateAgeMs: number | null;
  readonly syncInitialized: boolean;
  readonly lastSyncSuccessMs: number | null;
  /** Now minus the last successful sync; null if sync never succeeded. */
  readonly syncCursorAgeMs: number | null;
  /** Distinct error codes of live or sent rows changed in the recent window, most recent first. */
  readonly lastErrorCodes: readonly ErrorCodeCount[];
  /** Distinct reasons of rows ignored in the recent window, most recent first. */
  readonly ignoredReasons: readonly ErrorCodeCount[];
  readonly rooms: readonly RoomQueueSummary[];
  /** Active per-room conditions (encrypted, not joined, send refused, alias problems), oldest first. */
  readonly roomConditions: readonly RoomConditionSummary[];
  /** Rooms served end-to-end encrypted (empty unless encrypted rooms are on). */
  readonly encryptedRooms: readonly EncryptedRoomSummary[];
}

/** A streaming reply's message and its highest edit sequence number reserved. */
export interface ReplyStreamRow {
  /** The message the answer grows in; null while its first send is not known to have landed. */
  readonly sentEventId: string | null;
  /** Highest edit sequence number reserved (none at or below it is ever used again). */
  readonly lastSeq: number;
}

/** The durable ledger: sync position, room cursors, invocations and sent bot events. */
export interface StateStore {
  /** The mode this store was opened in. */
  readonly mode: StateStoreMode;
  /** The sync token and health stamp; defaults when nothing was ever committed. */
  syncState(): SyncStateView;
  /** The room's cursor, or null if the room was never baselined. */
  roomCursor(roomId: string): RoomCursorView | null;
  /** One transaction: next_batch, initialized, and all room cursors replaced (unlisted rooms dropped). */
  commitBaseline(input: BaselineInput): void;
  /** One transaction: new candidates (duplicates ignored), room cursors, next_batch, sync success. */
  commitSyncBatch(input: SyncBatchInput): { inserted: string[] };
  /** Held encrypted events, oldest first (at most `limit`). */
  heldEvents(limit: number): HeldEvent[];
  /** One transaction: a held event leaves the hold as a candidate, ignored with a code, or dropped; true when a candidate was inserted. */
  settleHeld(held: HeldEvent, outcome: HeldOutcome): boolean;
  /** Records whether Lisa serves the room end-to-end encrypted (for `lisa status`). */
  setEncryptedRoom(roomId: string, encrypted: boolean): void;
  /** Forgets every room recorded as served encrypted (a start with encrypted rooms off); returns how many. */
  forgetEncryptedRooms(): number;
  /** Records a successful sync that carried nothing to commit. */
  markSyncSuccess(): void;
  /** Forgets the sync position (M_UNKNOWN_POS) so the next start baselines again; keeps the ledger. */
  resetBaseline(): void;
  /** Rooms whose oldest pending invocation is actionable now. */
  roomsWithWork(): string[];
  /** Earliest time a currently waiting room head becomes actionable, or null if none waits. */
  nextWakeAtMs(): number | null;
  /** Leases the room's oldest pending invocation if it is actionable now (strict FIFO per room). */
  nextForRoom(roomId: string, leaseMs: number): WorkItem | null;
  /** candidate/processing -> ignored with a reason code; content cleared. */
  markIgnored(eventId: string, reasonCode: string): void;
  /** ready_to_send -> ignored (never sent) with a reason code, e.g. the room turned encrypted; content cleared. */
  discardReady(eventId: string, reasonCode: string): void;
  /** processing -> ready_to_send with the exact reply payload (a JSON object text). */
  commitReady(eventId: string, responseJson: string, errorCode?: string): void;
  /** ready_to_send -> sent plus its bot_events row; idempotent for the same sent event id. */
  markSent(eventId: string, sentEventId: string): void;
  /** Keeps a ready reply pending with an error code until `retryAtMs`. */
  recordSendFailure(eventId: string, code: string, retryAtMs: number): void;
  /** processing -> candidate; false (no change) if the row already moved past processing. */
  releaseLease(eventId: string, code?: string, retryAtMs?: number): boolean;
  /** The room's stored replies waiting for a send retry become due now (the room lets Lisa send again); returns how many. */
  resumeRoomSends(roomId: string): number;
  /** Expired processing leases -> candidate; returns how many. */
  recoverExpiredLeases(): number;
  /** At start (we hold the lock): every processing row -> candidate, every ready reply available now. */
  requeueAllOnStartup(): { candidates: number; ready: number };
  /** True if Lisa sent `eventId` in `roomId`. */
  isBotEvent(eventId: string, roomId: string): boolean;
  /** One invocation row, or null. */
  invocation(eventId: string): InvocationRow | null;
  /** Content-free counts, ages and codes for health and `lisa status`. */
  status(): StatusSummary;
  /** Active per-room conditions, oldest first. */
  roomConditions(): RoomConditionRow[];
  /** Records a per-room condition; false if it was already active. */
  raiseRoomCondition(room: string, code: string): boolean;
  /** Ends a per-room condition; false if it was not active. */
  clearRoomCondition(room: string, code: string): boolean;
  /** Drops conditions of rooms (ids or aliases) not in `keep`. */
  pruneRoomConditions(keep: readonly string[]): number;
  /** The room id an alias was last served as, or null. */
  aliasBinding(alias: string): string | null;
  /** Records the room id an alias is served as. */
  bindAlias(alias: string, roomId: string): void;
  /** Forgets bindings of aliases not in `keep`. */
  pruneAliasBindings(keep: readonly string[]): number;
  /** The invocation's streaming reply, or null when none was begun. */
  replyStream(eventId: string): ReplyStreamRow | null;
  /** Begins (or returns the existing) streaming reply, just before its first send. */
  beginReplyStream(eventId: string): ReplyStreamRow;
  /**
   * Records the message the streaming reply grows in and, in the same commit, reserves the next
   * `reserveSeqs` edit sequence numbers (none unless given); returns the first reserved.
   */
  setReplyStreamEvent(eventId: string, sentEventId: string, reserveSeqs?: number): number;
  /** Reserves the next `count` edit sequence numbers durably (before sending any of them); returns the first. */
  reserveEditSeqs(eventId: string, count: number): number;
  /** The instance lock this store holds (run mode), so what lives beside the database opens under the same lock; null read-only. */
  instanceLock(): InstanceLock | null;
  /** Closes the database and releases the instance lock; safe to call twice. */
  close(): void;
}
