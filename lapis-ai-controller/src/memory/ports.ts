// The ports the memory library runs over. The application supplies every one
// of them (its vault, its database, its evidence, its embedding model); the
// library never reaches past them. Expected failures are values with a stable
// code and `retryable`; a port that throws has a bug.

/** Every stable code the memory library answers with (docs/memory.md explains each). */
export const MEMORY_ERROR_CODES = [
  "memory_record_invalid",
  "memory_record_not_found",
  "memory_history_empty",
  "memory_revision_conflict",
  "memory_store_failed",
  "memory_lease_held",
  "memory_lease_lost",
  "memory_excluded",
  "memory_recalled_content",
  "memory_limit_exceeded",
  "candidate_rejected",
  "scanner_unavailable",
  "evidence_unauthorized",
  "evidence_location_invalid",
  "evidence_unavailable",
  "embedding_failed",
] as const;

/** A stable, payload-free memory error code. */
export type MemoryErrorCode = (typeof MEMORY_ERROR_CODES)[number];

/** A memory failure as a value: a code and whether a retry may succeed. Never carries memory text. */
export type MemoryError = { readonly code: MemoryErrorCode; readonly retryable: boolean };

/** The result of a memory operation whose failure is expected. */
export type MemoryResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: MemoryError };

/** A successful MemoryResult. */
export function memoryOk<T>(value: T): { readonly ok: true; readonly value: T } {
  return { ok: true, value };
}

/** A failed MemoryResult; `retryable` defaults to false. */
export function memoryErr(code: MemoryErrorCode, retryable = false): { readonly ok: false; readonly error: MemoryError } {
  return { ok: false, error: { code, retryable } };
}

// ---------------------------------------------------------------- access

/**
 * Who is asking, as the server derived it. The library only passes it on to
 * the application's ports; it never takes identity from memory content or
 * from a client.
 */
export type MemoryAccess = {
  readonly principal: string;
  readonly application: string;
  readonly thread: string;
  readonly workspace: string;
  readonly restricted: boolean;
};

// ---------------------------------------------------------------- candidates

/** A reference to the evidence a memory came from, with the sha256 (hex) of that evidence's bytes. */
export type MemorySource = { readonly ref: string; readonly sha256: string };

/** Whether text came out of recall (never stored again) or was ingested as new memory. */
export type MemoryOrigin = "recall" | "ingest";

/** One memory offered for recall, ranked; `score` is higher-is-better within one answer. */
export type MemoryCandidate = {
  id: string;
  text: string;
  score: number;
  updatedAt: string;
  sources: { ref: string; sha256: string }[];
  origin: "recall" | "ingest";
};

// ---------------------------------------------------------------- record store

/** One stored record: the serialized document of a profile, with its revision (1 for the first write). */
export type StoredRecord = {
  readonly partition: string;
  readonly id: string;
  readonly revision: number;
  readonly content: string;
};

/** The content a write replaced, kept so a record's history can be shown and undone. */
export type RecordPreimage = {
  readonly revision: number;
  readonly content: string;
};

/** An entry of a partition's exclusion list: content that forget removed and ingest must not bring back. */
export type ExclusionEntry = {
  /** sha256 (hex) of the normalized text that is excluded. */
  readonly sha256: string;
  /** The record the exclusion came from. */
  readonly recordId: string;
  /** When it was excluded (ISO 8601). */
  readonly at: string;
};

/** A held maintenance lease. Re-check it before each write made under it. */
export interface MaintenanceLease {
  readonly name: string;
  readonly holder: string;
  readonly expiresAt: string;
  /** Ok while this holder still holds the lease; `memory_lease_lost` once it expired or was taken. */
  check(): Promise<MemoryResult<void>>;
  /** Gives the lease up; releasing a lease already lost is not an error. */
  release(): Promise<void>;
}

/**
 * A record store over partitions (for the vault: user, workspace, project).
 * Revisions are optimistic: `put` names the revision it replaces (0 to
 * create) and fails with `memory_revision_conflict` otherwise. Every replace
 * keeps the replaced content as an immutable preimage.
 */
export interface MemoryRecordStore {
  get(partition: string, id: string): Promise<MemoryResult<StoredRecord | null>>;
  /** Writes `record` (its revision must be `expectedRevision + 1`), keeping the replaced content's preimage. */
  put(record: StoredRecord, expectedRevision: number): Promise<MemoryResult<StoredRecord>>;
  /** Every record of one partition, ordered by id. Never reads another partition. */
  list(partition: string): Promise<MemoryResult<StoredRecord[]>>;
  /** The preimages of one record, oldest first. */
  preimages(partition: string, id: string): Promise<MemoryResult<RecordPreimage[]>>;
  exclusions(partition: string): Promise<MemoryResult<ExclusionEntry[]>>;
  /** Adds an entry (an entry with the same sha256 already listed is kept as it is). */
  addExclusion(partition: string, entry: ExclusionEntry): Promise<MemoryResult<void>>;
  /** Removes the entry of `sha256` (undoing a forget); removing an absent entry is not an error. */
  removeExclusion(partition: string, sha256: string): Promise<MemoryResult<void>>;
  /** Takes the named maintenance lease for `ttlMs`, or `memory_lease_held` (retryable) while another holder has it. */
  acquireLease(name: string, holder: string, ttlMs: number): Promise<MemoryResult<MaintenanceLease>>;
}

// ---------------------------------------------------------------- evidence

/** Evidence an authorized read returned, with the sha256 (hex) of its bytes. */
export type EvidenceRead = { readonly ref: string; readonly text: string; readonly sha256: string };

/**
 * The application's evidence: what a memory was derived from. Authorization
 * always runs before a read; a location that scanning or redaction
 * transformed is refused as `evidence_location_invalid`, never opened.
 */
export interface EvidencePort {
  authorize(access: MemoryAccess, ref: string): Promise<MemoryResult<void>>;
  read(access: MemoryAccess, ref: string, signal: AbortSignal): Promise<MemoryResult<EvidenceRead>>;
}

// ---------------------------------------------------------------- embeddings

/** An injected embedding model; `embed` answers one vector of `dims` numbers per text, in order. */
export interface EmbeddingProvider {
  readonly id: string;
  readonly dims: number;
  embed(texts: readonly string[], signal: AbortSignal): Promise<MemoryResult<Float32Array[]>>;
}
