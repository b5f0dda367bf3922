// The retained record shapes of schema v1, as the domain sees them. The
// persistence layer maps rows to these and validates every retained row
// against the same vocabularies at startup (P-STO-05).

/** Retention profiles (P-STO-09): `full` keeps payloads; `metadata-only` keeps them volatile, in memory only. */
export const RETENTION_PROFILES = ["full", "metadata-only"] as const;
/** A retention profile. */
export type RetentionProfile = (typeof RETENTION_PROFILES)[number];

/** Turn states of plan 4.1 item 3. */
export const TURN_STATES = [
  "queued",
  "preparing",
  "dispatched",
  "running",
  "waiting",
  "cancelling",
  "completed",
  "failed",
  "cancelled",
  "interrupted",
  "submission_unknown",
] as const;
/** A turn state. */
export type TurnState = (typeof TURN_STATES)[number];

/** Generic approval policies (P-TRN-09). */
export const APPROVAL_POLICIES = ["ask", "allow-all"] as const;
/** A generic approval policy. */
export type ApprovalPolicy = (typeof APPROVAL_POLICIES)[number];

/** ACP native-mode results, kept apart (P-ARC-02). */
export const NATIVE_MODE_RESULTS = ["applied", "unsupported", "rejected", "unreported"] as const;
/** A native-mode result. */
export type NativeModeResult = (typeof NATIVE_MODE_RESULTS)[number];

/** Journal visibility: `transcript` rows are public and sequenced; `owner` rows are metadata only the owner journal shows. */
export const JOURNAL_VISIBILITIES = ["transcript", "owner"] as const;
/** A journal visibility. */
export type JournalVisibility = (typeof JOURNAL_VISIBILITIES)[number];

/** Where a journal row's payload lives: in the row, only in volatile memory, or nowhere (no payload). */
export const PAYLOAD_STATES = ["stored", "volatile", "none"] as const;
/** A payload state. */
export type PayloadState = (typeof PAYLOAD_STATES)[number];

/** Interaction kinds (permission requests, structured input, elicitations). */
export const INTERACTION_KINDS = ["permission", "structured_input", "elicitation"] as const;
/** An interaction kind. */
export type InteractionKind = (typeof INTERACTION_KINDS)[number];

/** Interaction states; all but `pending` are terminal. */
export const INTERACTION_STATES = ["pending", "settled", "expired", "cancelled", "closed"] as const;
/** An interaction state. */
export type InteractionState = (typeof INTERACTION_STATES)[number];

/** Who settled an interaction. */
export const DECIDERS = ["client", "policy", "host"] as const;
/** A decider. */
export type Decider = (typeof DECIDERS)[number];

/** Workspace lease kinds: a running turn's lease, or a fence left by a lost outcome. */
export const LEASE_KINDS = ["lease", "fence"] as const;
/** A lease kind. */
export type LeaseKind = (typeof LEASE_KINDS)[number];

/** A JSON value. */
export type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json };

/** Non-content metadata of a journal row: short scalar facts only (ids, codes, flags, counts). */
export type JournalMetadata = Readonly<Record<string, string | number | boolean | null>>;

/** A thread: one conversation on one workspace with one provider. */
export interface ThreadRecord {
  readonly threadId: string;
  readonly principal: string;
  /** Stamped from the session; `owner` for rows without one (AIC-API-004a). */
  readonly application: string;
  readonly workspaceId: string;
  readonly provider: string;
  readonly retention: RetentionProfile;
  readonly restricted: boolean;
  /** Optimistic configuration version (P-TRN-27). */
  readonly configVersion: number;
  /** Non-secret thread configuration (approval policy, provider options). */
  readonly config: { readonly [key: string]: Json };
  /** Endpoint and source identities the thread is bound to (reattach checks); identities only. */
  readonly binding: { readonly [key: string]: Json };
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A turn: one accepted unit of work on a thread. */
export interface TurnRecord {
  readonly turnId: string;
  readonly threadId: string;
  readonly commandId: string;
  /** The prior turn this one continues (P-TRN-21), or null. */
  readonly attemptOf: string | null;
  readonly state: TurnState;
  readonly workspaceId: string;
  readonly provider: string;
  readonly configVersion: number;
  /** A short error code only, never exception text (P-STO-08). */
  readonly errorCode: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** An accepted command: idempotency on command identity (P-API-07). */
export interface CommandRecord {
  readonly principal: string;
  readonly application: string;
  readonly commandId: string;
  readonly method: string;
  /** A digest of the canonical command input, to tell a repeat from a conflict. */
  readonly inputDigest: string;
  /** The receipt returned for this command: short scalar facts only, no payload (P-STO-10). */
  readonly receipt: JournalMetadata;
  readonly createdAt: number;
}

/** One row of the ordered owner journal. */
export interface JournalRecord {
  /** Global order of the owner journal. */
  readonly journalId: number;
  readonly threadId: string;
  readonly turnId: string | null;
  /** Contiguous per-thread transcript sequence; null for owner-only rows. */
  readonly seq: number | null;
  readonly visibility: JournalVisibility;
  readonly kind: string;
  /** Optional logical message id (P-PRV-06), independent of frame ids. */
  readonly messageId: string | null;
  readonly payloadState: PayloadState;
  /** The payload when stored; null otherwise. */
  readonly payload: Json | null;
  readonly metadata: JournalMetadata;
  readonly createdAt: number;
}

/** A recorded interaction (permission request, structured input, elicitation). */
export interface InteractionRecord {
  readonly interactionId: string;
  readonly turnId: string;
  readonly threadId: string;
  /** The provider's exact request id (P-TRN-16). */
  readonly nativeRequestId: string;
  readonly kind: InteractionKind;
  readonly state: InteractionState;
  /** The exact option ids offered (P-TRN-10). */
  readonly optionIds: readonly string[];
  readonly outcome: string | null;
  readonly decidedBy: Decider | null;
  readonly deadlineAt: number;
  readonly createdAt: number;
  readonly settledAt: number | null;
}

/** A workspace held by a turn: a live lease, or a fence after a lost outcome (P-TRN-04). */
export interface WorkspaceLeaseRecord {
  readonly workspaceId: string;
  readonly turnId: string;
  readonly kind: LeaseKind;
  readonly acquiredAt: number;
  /** Deadline for a provider's cancel confirmation (P-TRN-01), or null. */
  readonly confirmDeadlineAt: number | null;
}

/** A native provider session bound to a thread, apart from turn and command identities (P-ARC-19). */
export interface ProviderSessionRecord {
  readonly threadId: string;
  readonly provider: string;
  readonly nativeSessionId: string;
  /** Non-secret binding facts (e.g. vcsIdentity) whose change replaces the session (P-PRV-05). */
  readonly binding: { readonly [key: string]: Json };
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A revocable AuthSession (AIC-API-003). The bearer itself is never stored, only its digest. */
export interface AuthSessionRecord {
  readonly authSessionId: string;
  /** The identity of the bootstrap credential (never the credential bytes). */
  readonly credentialId: string;
  readonly principal: string;
  readonly application: string;
  readonly scopes: readonly string[];
  readonly bearerDigest: string | null;
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly revokedAt: number | null;
}

/** An audit row (e.g. an owner resolving a submission-unknown turn, P-TRN-06). */
export interface AuditRecord {
  readonly auditId: number;
  readonly at: number;
  readonly actor: string;
  /** A snake_case action name. */
  readonly action: string;
  readonly subjectKind: string;
  readonly subjectId: string;
  /** Non-content facts (codes, states, flags). */
  readonly details: JournalMetadata;
}

/** The retained, non-content record of a turn's preparation (P-STO-07, P-ARC-01..04). */
export interface PreparationMarkerRecord {
  readonly turnId: string;
  readonly threadId: string;
  readonly configVersion: number;
  readonly retention: RetentionProfile;
  readonly approvalRequested: ApprovalPolicy;
  readonly approvalEffective: ApprovalPolicy;
  /** Why the effective policy differs from the requested one, or null. */
  readonly suppressedBy: "restricted" | null;
  readonly nativeModeRequested: string | null;
  readonly nativeModeResult: NativeModeResult | null;
  /** True when the prepared payload (prompt, context) exists only in volatile memory. */
  readonly payloadVolatile: boolean;
  readonly preparedAt: number;
}
