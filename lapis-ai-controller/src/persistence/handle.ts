// What every table accessor receives: the open database, the transaction
// runner and the clock. Accessor files (one per table) build their port from
// a StoreHandle, so a later issue adds a table accessor without editing the
// ones already here.

import type { DatabaseSync } from "node:sqlite";
import type { Clock } from "../domain/ports.ts";
import type { RetentionProfile } from "../domain/records.ts";
import type { VolatilePayloads } from "./volatile-payloads.ts";

/** The shared internals of an open store, for accessor factories inside persistence/. */
export interface StoreHandle {
  readonly db: DatabaseSync;
  readonly clock: Clock;
  /** The integration's default retention profile for new threads. */
  readonly retention: RetentionProfile;
  /** Payloads of metadata-only threads, kept in memory only (P-STO-09, P-STO-14). */
  readonly volatile: VolatilePayloads;
  /** Runs `work` in one `BEGIN IMMEDIATE` transaction after committing the group queue; nested calls join the outer one. */
  transact<T>(work: () => T): T;
  /**
   * Queues `work` for the next group commit (persistence/group-commit.ts): one
   * transaction for what arrives before the next macrotask, bounded in size;
   * `committed` runs after its COMMIT. Inside a transaction it joins that one.
   */
  group(work: () => void, committed: () => void): void;
  /** Commits the group queue now: a barrier before anything that depends on queued writes leaves the process. */
  flush(): void;
  /** Items in the group queue, not yet committed (it only grows until their commit). */
  pending(): number;
}
