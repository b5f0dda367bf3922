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
export { compareRanked, compareRecency, fuseRrf, rankLexical, RRF_K, tokenize, type LexicalOptions, type RankDocument, type Ranked } from "./ranking.ts";
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
