// lapis-ai-controller/memory: the memory library an application runs in its
// own process, over ports it supplies. The controller service decides when
// memory is recalled and what reaches the agent; this module holds the
// formats, stores and ranking (docs/memory.md).

// Ports and errors
export {
  MEMORY_ERROR_CODES, memoryErr, memoryOk,
  type EmbeddingProvider, type EvidencePort, type EvidenceRead, type ExclusionEntry, type MaintenanceLease, type MemoryAccess,
  type MemoryCandidate, type MemoryError, type MemoryErrorCode, type MemoryOrigin, type MemoryRecordStore, type MemoryResult,
  type MemorySource, type RecordPreimage, type StoredRecord,
} from "./ports.ts";
// Shared ranking and redaction screening
export { compareRanked, compareRecency, fuseRrf, rankLexical, RRF_K, termStats, tokenize, type LexicalOptions, type RankDocument, type Ranked, type TermStats } from "./ranking.ts";
export { carriesRecalledTag, checkCandidateText, hasReservedMarker, OMITTED_MARKER, REDACTED_MARKER, scanMemoryTexts, screenCandidates, type ScreenedCandidates } from "./redaction.ts";
export { PORTABLE_SCAN_MAX_CHARS, portableRedactor } from "./portable-redactor.ts";
// The vault profile
export {
  EPISODE_FIELDS, EPISODE_SCHEMA, episodeText, parseEpisode, serializeEpisode, writeEpisode,
  type Episode, type EpisodeField, type EpisodeParseError, type EpisodeParseReason, type EpisodeState, type EpisodeTier,
} from "./lapis/episode.ts";
export { EXCLUSIONS_HEADER, formatExclusions, parseExclusions } from "./lapis/exclusions.ts";
export { MarkdownFilesStore, type FilesStoreOptions } from "./lapis/files-store.ts";
export { InMemoryRecordStore, type InMemoryStoreOptions } from "./lapis/memory-store.ts";
export { PARTITION_PATTERN, STORE_LIMIT_CAPS, STORE_LIMIT_DEFAULTS, type StoreLimits } from "./lapis/store-rules.ts";
export { planConsolidation, type ConsolidationOutcome, type ConsolidationPlan, type ConsolidationRules, type ConsolidationWrite } from "./lapis/consolidate.ts";
export type { ForgetOutcome } from "./lapis/forget.ts";
export type { IngestInput, IngestOutcome } from "./lapis/ingest.ts";
export type { Inspection, MemorySummary, RevisionView } from "./lapis/inspect.ts";
export type { SearchInput, SearchOutcome } from "./lapis/search.ts";
export { contentHash, formatRef, parseRef, VAULT_LIMIT_CAPS, VAULT_LIMIT_DEFAULTS, type MemoryRef, type VaultLimits, type VaultOptions } from "./lapis/vault-context.ts";
export { VaultMemory } from "./lapis/vault.ts";
export { vaultMemoryHandlers, VaultEndpointFailure, WIRE_MAX_SOURCES, type VaultEndpointOptions } from "./lapis/endpoint.ts";
export type { RecordLocation } from "./lapis/search.ts";
// The pinned native embedding provider (opt-in: the optional peer onnxruntime-node, ~180 MB RSS; docs/memory-embeddings.md)
export { createNativeEmbeddingProvider, NATIVE_LIMITS, type NativeEmbeddingError, type NativeEmbeddingOptions, type NativeEmbeddingProvider } from "./native/provider.ts";
export { NATIVE_MODEL, type ModelFilesError } from "./native/model-files.ts";
// The group profile (schema 1, docs/memory-group.md) over a database port, with a node:sqlite adapter
export { formatGroupRef, openGroupMemory, parseGroupRef, type GroupCapture, type GroupMemory, type GroupMemoryOptions, type GroupStartup } from "./group/profile.ts";
export { GROUP_LIMIT_CAPS, GROUP_LIMIT_DEFAULTS, type GroupClaim, type GroupLimits, type GroupRecord, type GroupRecordStatus, type GroupRememberInput } from "./group/records.ts";
export type { GroupDatabase, SqlRow, SqlValue } from "./group/database-port.ts";
export { openSqliteGroupDatabase, type SqliteGroupOptions } from "./group/sqlite-database.ts";
export type { GroupHit, GroupSearchQuery, GroupSearchResult } from "./group/search.ts";
export { GROUP_SCHEMA_VERSION } from "./group/schema.ts";
// The OpenAI-compatible /v1/embeddings provider (llama-server --embeddings, Ollama, hosted APIs)
export { openAiEmbeddingProvider, type EmbeddingConfigError, type OpenAiEmbeddingOptions } from "./embedding-openai.ts";
