// Schema 1 of the group memory database (docs/memory-group.md is the
// contract). Partitions are numbered once; records carry their claims, their
// lifecycle and their revision; the lexical index is an FTS5 table over the
// records' tokenized text (external content, so the index stores no second
// copy of the text and can be rebuilt from the records at any time).
import type { GroupDatabase } from "./database-port.ts";

/** The schema version this code reads and writes. */
export const GROUP_SCHEMA_VERSION = 1;

const DDL = `
CREATE TABLE IF NOT EXISTS group_memory_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS group_partitions (
  no INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS group_records (
  no INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  partition_no INTEGER NOT NULL REFERENCES group_partitions(no),
  text TEXT NOT NULL,
  search_text TEXT NOT NULL,
  text_sha256 TEXT NOT NULL,
  claims TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('active', 'superseded', 'forgotten')),
  superseded_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  revision INTEGER NOT NULL CHECK (revision >= 1),
  embed_state TEXT NOT NULL CHECK (embed_state IN ('none', 'pending', 'ready', 'failed'))
) STRICT;
CREATE INDEX IF NOT EXISTS group_records_by_partition ON group_records (partition_no, status, updated_at);
CREATE UNIQUE INDEX IF NOT EXISTS group_records_active_text ON group_records (partition_no, text_sha256) WHERE status = 'active';
CREATE INDEX IF NOT EXISTS group_records_embed ON group_records (embed_state) WHERE embed_state IN ('pending', 'failed');
CREATE VIRTUAL TABLE IF NOT EXISTS group_records_fts USING fts5(
  search_text, content = 'group_records', content_rowid = 'no', tokenize = 'unicode61 remove_diacritics 0'
);
CREATE TABLE IF NOT EXISTS group_exclusions (
  partition_no INTEGER NOT NULL REFERENCES group_partitions(no),
  sha256 TEXT NOT NULL,
  record_id TEXT NOT NULL,
  at TEXT NOT NULL,
  PRIMARY KEY (partition_no, sha256)
) STRICT;
CREATE TABLE IF NOT EXISTS group_vectors (
  record_no INTEGER PRIMARY KEY REFERENCES group_records(no),
  provider TEXT NOT NULL,
  dims INTEGER NOT NULL CHECK (dims >= 1),
  vector BLOB NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS group_embedding_errors (
  seq INTEGER PRIMARY KEY,
  record_id TEXT NOT NULL,
  provider TEXT NOT NULL,
  code TEXT NOT NULL,
  at TEXT NOT NULL
) STRICT;
`;

/** Why a database cannot be used as group memory. */
export type SchemaProblem = "memory_schema_unsupported";

/**
 * Creates schema 1 in an empty database, or checks that an existing one is
 * schema 1; a newer or unknown version is refused, never rewritten.
 */
export function ensureGroupSchema(db: GroupDatabase): { ok: true } | { ok: false; code: SchemaProblem } {
  const meta = db.get("SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = 'group_memory_meta'");
  if (meta !== undefined) {
    const row = db.get("SELECT value FROM group_memory_meta WHERE key = 'schema'");
    if (row?.value !== String(GROUP_SCHEMA_VERSION)) return { ok: false, code: "memory_schema_unsupported" };
  }
  db.exec("BEGIN IMMEDIATE");
  try {
    db.exec(DDL);
    db.run("INSERT OR IGNORE INTO group_memory_meta (key, value) VALUES ('schema', ?)", [String(GROUP_SCHEMA_VERSION)]);
    db.exec("COMMIT");
  } catch (cause) {
    db.exec("ROLLBACK");
    throw cause;
  }
  return { ok: true };
}

/** Rebuilds the lexical index from the records (startup; computes no embedding). */
export function rebuildLexicalIndex(db: GroupDatabase): void {
  db.run("INSERT INTO group_records_fts (group_records_fts) VALUES ('rebuild')");
}
