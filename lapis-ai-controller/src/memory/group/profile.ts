// The group memory profile: one open database, its record store, its
// lexical index (rebuilt from the records at every open, without a single
// embedding call), and, when an embedding provider is injected, the vector
// index and the background drain. Search filters by partition before any
// scoring and fuses the lexical and vector rankings by reciprocal rank.
import type { EntryRedactor } from "../../domain/redaction-port.ts";
import { memoryErr, memoryOk, type EmbeddingProvider, type MemoryCandidate, type MemoryResult } from "../ports.ts";
import type { GroupDatabase } from "./database-port.ts";
import { EmbeddingDrain, type DrainEvent } from "./drain.ts";
import { rebuildEmbeddings, recoverEmbeddings, embeddingCounts, loadVectors, type EmbeddingStatus } from "./embedding-state.ts";
import { groupLimits, type GroupLimits, type GroupRecord, type GroupRecordStatus, type GroupRememberInput } from "./records.ts";
import { ensureGroupSchema, rebuildLexicalIndex } from "./schema.ts";
import { searchGroup, type GroupSearchQuery, type GroupSearchResult } from "./search.ts";
import { GroupRecordStore } from "./store.ts";
import { VectorIndex } from "./vectors.ts";

/** The capture boundary: the redaction port every durable write passes, and how to dispose it. */
export type GroupCapture = { readonly redactor: EntryRedactor; dispose?(): void | Promise<void> };

/** How to open group memory. */
export type GroupMemoryOptions = {
  readonly db: GroupDatabase;
  readonly capture: GroupCapture;
  /** Vector search and the drain exist only with a provider. */
  readonly embeddings?: EmbeddingProvider;
  readonly limits?: Partial<GroupLimits>;
  readonly now?: () => Date;
  readonly newId?: () => string;
  /** Drain events (codes and counts only); an observer that throws is ignored. */
  readonly observe?: (event: DrainEvent) => void;
};

/** What the open did. */
export type GroupStartup = { readonly records: number; readonly vectorsLoaded: number; readonly rebuildMs: number };

/** An open group memory. */
export type GroupMemory = {
  readonly startup: GroupStartup;
  remember(input: GroupRememberInput): MemoryResult<GroupRecord>;
  supersede(partition: string, id: string, expectedRevision: number, input: Omit<GroupRememberInput, "partition">): MemoryResult<{ record: GroupRecord; previous: GroupRecord }>;
  forget(partition: string, id: string, expectedRevision: number): MemoryResult<GroupRecord>;
  get(partition: string, id: string): MemoryResult<GroupRecord>;
  list(partition: string, options?: { status?: GroupRecordStatus; limit?: number }): MemoryResult<GroupRecord[]>;
  search(query: GroupSearchQuery): Promise<MemoryResult<GroupSearchResult>>;
  /** Explicit rebuild: every active record is embedded again with the current provider. */
  rebuildEmbeddings(): MemoryResult<{ queued: number }>;
  /** Explicit recovery: clears a drain halt and queues every pending and failed record. */
  recoverEmbeddings(): MemoryResult<{ queued: number }>;
  embeddingStatus(): EmbeddingStatus;
  /** Settles when the drain has nothing left to do (or halted). */
  drained(): Promise<void>;
  /** Stops queued work, then disposes the capture boundary, then closes the database. */
  close(): Promise<void>;
};

/** A candidate for recall from a hit (sources are the claims' evidence). */
export function groupCandidate(record: GroupRecord, score: number): MemoryCandidate {
  return { id: record.id, text: record.text, score, updatedAt: record.updatedAt, sources: record.claims.map((c) => ({ ref: c.ref, sha256: c.sha256 })), origin: "ingest" };
}

/** Opens group memory over a database: schema 1 is created or checked, the lexical index rebuilt, stored vectors loaded. */
export function openGroupMemory(options: GroupMemoryOptions): MemoryResult<GroupMemory> | { ok: false; error: { code: "memory_schema_unsupported"; retryable: false } } {
  const limits = groupLimits(options.limits);
  if (!limits.ok) return memoryErr("memory_limit_exceeded");
  const { db, embeddings: provider } = options;
  const schema = ensureGroupSchema(db);
  if (!schema.ok) return { ok: false, error: { code: schema.code, retryable: false } };
  const started = performance.now();
  rebuildLexicalIndex(db);
  const rebuildMs = performance.now() - started;
  const records = Number(db.get("SELECT count(*) AS n FROM group_records WHERE status = 'active'")?.n ?? 0);
  const now = options.now ?? (() => new Date());
  const index = provider === undefined ? null : new VectorIndex(provider.dims, Math.max(1_024, records));
  const vectorsLoaded = provider === undefined || index === null ? 0 : loadVectors(db, provider, index);
  const drain = provider === undefined || index === null ? null : new EmbeddingDrain({ db, provider, redactor: options.capture.redactor, index, limits: limits.value, now, observe: options.observe ?? (() => undefined) });
  const store = new GroupRecordStore({
    db, redactor: options.capture.redactor, limits: limits.value, now, newId: options.newId ?? (() => `gm_${crypto.randomUUID()}`), embeds: provider !== undefined,
    onRemoved: (no) => index?.remove(no),
  });
  let closed: Promise<void> | null = null;
  const closedSignal = new AbortController();
  const open = <T>(work: () => MemoryResult<T>): MemoryResult<T> => (closed === null ? work() : memoryErr("memory_store_failed"));
  const queue = (no: number | null) => {
    if (no !== null) drain?.enqueue([no]);
  };
  return memoryOk({
    startup: { records, vectorsLoaded, rebuildMs },
    remember: (input) => open(() => {
      const written = store.remember(input);
      if (!written.ok) return written;
      queue(written.value.indexed);
      return memoryOk(written.value.record);
    }),
    supersede: (partition, id, expectedRevision, input) => open(() => {
      const written = store.supersede(partition, id, expectedRevision, input);
      if (!written.ok) return written;
      queue(written.value.indexed);
      return memoryOk({ record: written.value.record, previous: written.value.previous });
    }),
    forget: (partition, id, expectedRevision) => open(() => store.forget(partition, id, expectedRevision)),
    get: (partition, id) => open(() => store.get(partition, id)),
    list: (partition, o) => open(() => store.list(partition, o)),
    search: async (query) => {
      if (closed !== null) return memoryErr("memory_store_failed");
      return searchGroup({ db, store, limits: limits.value, provider: provider ?? null, index, stop: closedSignal.signal }, query);
    },
    rebuildEmbeddings: () => open(() => (drain === null ? memoryErr("embedding_failed") : memoryOk({ queued: rebuildEmbeddings(db, index as VectorIndex, drain) }))),
    recoverEmbeddings: () => open(() => (drain === null ? memoryErr("embedding_failed") : memoryOk({ queued: recoverEmbeddings(db, drain) }))),
    embeddingStatus: () => embeddingCounts(db, drain),
    drained: async () => drain?.idle(),
    close: () => {
      closed ??= (async () => {
        closedSignal.abort();
        await drain?.close();
        await options.capture.dispose?.();
        db.close();
      })();
      return closed;
    },
  });
}
