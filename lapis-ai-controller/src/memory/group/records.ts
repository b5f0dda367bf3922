// Group memory records, schema 1: a record is one statement kept for a
// partition (a group, a channel, a project), with the claims that back it
// (who said it, on which evidence), a lifecycle (active, superseded,
// forgotten), its creation and update times and a revision that every
// mutation raises by one. Limits are validated and capped here.

/** One claim behind a record: who asserted it, on which evidence (with that evidence's sha256), when. */
export type GroupClaim = { readonly by: string; readonly ref: string; readonly sha256: string; readonly at: string };

/** Where a record is in its life. */
export type GroupRecordStatus = "active" | "superseded" | "forgotten";

/** A stored group record. A forgotten record is a tombstone: its text is empty. */
export type GroupRecord = {
  readonly schema: 1;
  readonly id: string;
  readonly partition: string;
  readonly text: string;
  readonly claims: readonly GroupClaim[];
  readonly status: GroupRecordStatus;
  readonly supersededBy: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly revision: number;
};

/** What a caller offers to remember. `origin: "recall"` (text that came out of recall) is refused. */
export type GroupRememberInput = {
  readonly partition: string;
  readonly text: string;
  readonly claim: { readonly by: string; readonly ref: string; readonly sha256: string };
  readonly origin?: "ingest" | "recall";
};

/** The profile's limits. */
export type GroupLimits = {
  /** Characters in one record's text. */
  readonly maxTextChars: number;
  /** Claims one record keeps (the oldest are kept; later repeats only raise the revision). */
  readonly maxClaims: number;
  /** Hits one search answers. */
  readonly maxSearchLimit: number;
  /** Candidates each ranking (lexical, vector) hands to fusion. */
  readonly candidateDepth: number;
  /** Partitions one search may name. */
  readonly maxPartitionsPerSearch: number;
  /** Texts per embedding call of the background drain. */
  readonly embedBatch: number;
  /** Deadline of one embedding call. */
  readonly embedTimeoutMs: number;
  /** How long close() waits for an in-flight embedding call to settle. */
  readonly closeWaitMs: number;
};

export const GROUP_LIMIT_DEFAULTS: GroupLimits = {
  maxTextChars: 4_000,
  maxClaims: 64,
  maxSearchLimit: 50,
  candidateDepth: 100,
  maxPartitionsPerSearch: 16,
  embedBatch: 32,
  embedTimeoutMs: 30_000,
  closeWaitMs: 5_000,
};

export const GROUP_LIMIT_CAPS: GroupLimits = {
  maxTextChars: 32_000,
  maxClaims: 1_024,
  maxSearchLimit: 500,
  candidateDepth: 5_000,
  maxPartitionsPerSearch: 256,
  embedBatch: 512,
  embedTimeoutMs: 600_000,
  closeWaitMs: 60_000,
};

/** Validates partial limits against their caps; the failing key on error. */
export function groupLimits(raw: Partial<GroupLimits> | undefined): { ok: true; value: GroupLimits } | { ok: false; key: string } {
  const out: Record<string, number> = { ...GROUP_LIMIT_DEFAULTS };
  for (const [key, value] of Object.entries(raw ?? {})) {
    const cap = (GROUP_LIMIT_CAPS as Record<string, number>)[key];
    if (cap === undefined || typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > cap) return { ok: false, key };
    out[key] = value;
  }
  return { ok: true, value: out as GroupLimits };
}

const PARTITION = /^[\p{L}\p{N}._:@/-]{1,200}$/u;
const SHA256 = /^[0-9a-f]{64}$/;
const SHORT = 500;

/** A partition id: 1..200 letters, digits and `._:@/-`. */
export function validPartition(value: unknown): value is string {
  return typeof value === "string" && PARTITION.test(value);
}

/** Why an input is not a valid record; null when it is. */
export function rememberProblem(input: GroupRememberInput, limits: GroupLimits): "memory_record_invalid" | "memory_limit_exceeded" | null {
  if (input === null || typeof input !== "object" || !validPartition(input.partition)) return "memory_record_invalid";
  if (typeof input.text !== "string" || input.text.trim() === "") return "memory_record_invalid";
  if (input.text.length > limits.maxTextChars) return "memory_limit_exceeded";
  const c = input.claim;
  if (c === null || typeof c !== "object") return "memory_record_invalid";
  if (typeof c.by !== "string" || c.by === "" || c.by.length > SHORT) return "memory_record_invalid";
  if (typeof c.ref !== "string" || c.ref === "" || c.ref.length > SHORT) return "memory_record_invalid";
  if (typeof c.sha256 !== "string" || !SHA256.test(c.sha256)) return "memory_record_invalid";
  if (input.origin !== undefined && input.origin !== "ingest" && input.origin !== "recall") return "memory_record_invalid";
  return null;
}
