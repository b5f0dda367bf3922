// The exclusion list, schema 1: content that forget removed and ingest must
// never bring back, one `<sha256> <record id> <time>` line per entry after a
// header line, LF newlines, sorted by sha256 so the file is deterministic.
import { memoryErr, memoryOk, type ExclusionEntry, type MemoryResult } from "../ports.ts";
import { ID_PATTERN, isEpisodeTime, isSha256 } from "./episode.ts";

/** The first line of every exclusion file. */
export const EXCLUSIONS_HEADER = "# memory exclusions, schema 1";

/** Parses an exclusion file; anything off the grammar is `memory_record_invalid`. */
export function parseExclusions(text: string): MemoryResult<ExclusionEntry[]> {
  if (!text.endsWith("\n")) return memoryErr("memory_record_invalid");
  const lines = text.slice(0, -1).split("\n");
  if (lines[0] !== EXCLUSIONS_HEADER) return memoryErr("memory_record_invalid");
  const out: ExclusionEntry[] = [];
  for (const line of lines.slice(1)) {
    const [sha256, recordId, at, extra] = line.split(" ");
    if (sha256 === undefined || recordId === undefined || at === undefined || extra !== undefined) return memoryErr("memory_record_invalid");
    if (!isSha256(sha256) || !ID_PATTERN.test(recordId) || !isEpisodeTime(at)) return memoryErr("memory_record_invalid");
    out.push({ sha256, recordId, at });
  }
  return memoryOk(out);
}

/** Formats entries (sorted by sha256, one per hash); an invalid entry is `memory_record_invalid`. */
export function formatExclusions(entries: readonly ExclusionEntry[]): MemoryResult<string> {
  const byHash = new Map<string, ExclusionEntry>();
  for (const e of entries) {
    if (!isSha256(e.sha256) || !ID_PATTERN.test(e.recordId) || !isEpisodeTime(e.at)) return memoryErr("memory_record_invalid");
    if (!byHash.has(e.sha256)) byHash.set(e.sha256, e);
  }
  const lines = [...byHash.values()].sort((a, b) => (a.sha256 < b.sha256 ? -1 : 1)).map((e) => `${e.sha256} ${e.recordId} ${e.at}`);
  return memoryOk(`${[EXCLUSIONS_HEADER, ...lines].join("\n")}\n`);
}
