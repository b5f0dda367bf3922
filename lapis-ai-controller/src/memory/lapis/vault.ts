// The vault memory profile as one object over the application's ports: a
// record store (the Markdown-files store, the in-memory one, or the
// application's own), the redaction port, a clock and an id source.
import type { MemoryCandidate, MemoryResult } from "../ports.ts";
import { consolidate, type ConsolidationOutcome } from "./consolidate.ts";
import { forget, type ForgetOutcome } from "./forget.ts";
import { ingest, type IngestInput, type IngestOutcome } from "./ingest.ts";
import { inspect, listMemories, undo, type Inspection, type MemorySummary } from "./inspect.ts";
import { readMemory, search, type RecordLocation, type SearchInput, type SearchOutcome } from "./search.ts";
import { vaultContext, type VaultContext, type VaultOptions } from "./vault-context.ts";

/** Vault memory: ingest, search, inspect, undo, forget and consolidate over one record store. */
export class VaultMemory {
  readonly #ctx: VaultContext;

  constructor(options: VaultOptions) {
    this.#ctx = vaultContext(options);
  }

  /** Stores a new memory (or answers the record already holding the same text). */
  ingest(input: IngestInput): Promise<MemoryResult<IngestOutcome>> {
    return ingest(this.#ctx, input);
  }

  /** Ranked candidates from the given partitions only. */
  search(input: SearchInput): Promise<MemoryResult<SearchOutcome>> {
    return search(this.#ctx, input);
  }

  /** Just the candidates of a search (what a memory endpoint answers). */
  async candidates(input: SearchInput): Promise<MemoryResult<MemoryCandidate[]>> {
    const found = await search(this.#ctx, input);
    return found.ok ? { ok: true, value: found.value.candidates } : found;
  }

  /** One active memory of `partitions`, screened, with the location of the revision read. */
  read(ref: string, partitions: readonly string[]): Promise<MemoryResult<{ candidate: MemoryCandidate; location: RecordLocation }>> {
    return readMemory(this.#ctx, ref, partitions);
  }

  /** One memory and its revision history. */
  inspect(ref: string): Promise<MemoryResult<Inspection>> {
    return inspect(this.#ctx, ref);
  }

  /** A partition's memories, most recent first (active only unless `all`). */
  list(partition: string, options: { all?: boolean } = {}): Promise<MemoryResult<MemorySummary[]>> {
    return listMemories(this.#ctx, partition, options);
  }

  /** Writes the previous revision back as a new one. */
  undo(ref: string, expectedRevision: number): Promise<MemoryResult<{ ref: string; revision: number; restored: number }>> {
    return undo(this.#ctx, ref, expectedRevision);
  }

  /** Tombstones a memory and excludes its text from ingest. */
  forget(ref: string, expectedRevision?: number): Promise<MemoryResult<ForgetOutcome>> {
    return forget(this.#ctx, ref, expectedRevision);
  }

  /** Deterministic promotion over one partition, under its maintenance lease. */
  consolidate(partition: string, holder: string): Promise<MemoryResult<ConsolidationOutcome>> {
    return consolidate(this.#ctx, partition, holder);
  }
}
