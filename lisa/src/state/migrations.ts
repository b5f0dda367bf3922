import type { DatabaseSync } from "node:sqlite";

/** One numbered schema change, applied in its own transaction. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly statements: readonly string[];
}

// Ordered list: a future schema change is a new entry with the next version,
// never an edit of an applied one. Version 1 is the ledger's first schema,
// room_cursors.baseline_ts_ms and sync_state.last_success_ms included.
/** Every migration this code knows, in version order. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "initial ledger",
    statements: [
      `CREATE TABLE schema_migrations(
        version INTEGER PRIMARY KEY,
        applied_at_ms INTEGER NOT NULL
      )`,
      `CREATE TABLE sync_state(
        singleton INTEGER PRIMARY KEY CHECK(singleton = 1),
        next_batch TEXT,
        initialized INTEGER NOT NULL CHECK(initialized IN (0, 1)),
        updated_at_ms INTEGER NOT NULL,
        last_success_ms INTEGER
      )`,
      `CREATE TABLE room_cursors(
        room_id TEXT PRIMARY KEY,
        last_timeline_event_id TEXT,
        updated_at_ms INTEGER NOT NULL,
        baseline_ts_ms INTEGER
      )`,
      `CREATE TABLE invocations(
        event_id TEXT PRIMARY KEY,
        room_id TEXT NOT NULL,
        sender_id TEXT NOT NULL,
        received_at_ms INTEGER NOT NULL,
        status TEXT NOT NULL,
        raw_event_json TEXT,
        response_json TEXT,
        matrix_txn_id TEXT NOT NULL UNIQUE,
        sent_event_id TEXT,
        attempt_count INTEGER NOT NULL DEFAULT 0,
        available_at_ms INTEGER NOT NULL,
        last_error_code TEXT,
        updated_at_ms INTEGER NOT NULL
      )`,
      `CREATE INDEX invocations_ready ON invocations(status, available_at_ms, received_at_ms)`,
      `CREATE INDEX invocations_room ON invocations(room_id, received_at_ms)`,
      `CREATE TABLE bot_events(
        event_id TEXT PRIMARY KEY,
        room_id TEXT NOT NULL,
        invocation_event_id TEXT NOT NULL UNIQUE,
        sent_at_ms INTEGER NOT NULL,
        FOREIGN KEY(invocation_event_id) REFERENCES invocations(event_id)
      )`,
    ],
  },
  {
    // Issue 18: per-room conditions (encrypted, not joined, send refused,
    // alias problems) that `lisa status` reports, and each configured alias's
    // room, so a repointed alias is noticed instead of followed.
    version: 2,
    name: "room conditions and alias bindings",
    statements: [
      `CREATE TABLE room_conditions(
        room TEXT NOT NULL,
        code TEXT NOT NULL,
        since_ms INTEGER NOT NULL,
        PRIMARY KEY(room, code)
      )`,
      `CREATE TABLE room_aliases(
        alias TEXT PRIMARY KEY,
        room_id TEXT NOT NULL,
        updated_at_ms INTEGER NOT NULL
      )`,
    ],
  },
  {
    // Encrypted rooms (LISA-E2EE-02, -12): encrypted events held (ciphertext)
    // until their room key arrives, and the rooms served encrypted.
    version: 3,
    name: "held encrypted events and encrypted rooms",
    statements: [
      `CREATE TABLE e2ee_held(
        event_id TEXT PRIMARY KEY,
        room_id TEXT NOT NULL,
        sender_id TEXT NOT NULL,
        received_at_ms INTEGER NOT NULL,
        raw_event_json TEXT NOT NULL,
        held_at_ms INTEGER NOT NULL,
        deadline_ms INTEGER NOT NULL
      )`,
      `CREATE TABLE e2ee_rooms(
        room_id TEXT PRIMARY KEY,
        since_ms INTEGER NOT NULL
      )`,
    ],
  },
  {
    // Streaming replies: the message an invocation's answer grows in (null
    // until its first send is known to have landed) and the last edit
    // sequence number taken, so a restarted Lisa edits the same message on.
    version: 4,
    name: "reply streams",
    statements: [
      `CREATE TABLE reply_streams(
        invocation_event_id TEXT PRIMARY KEY,
        sent_event_id TEXT,
        last_seq INTEGER NOT NULL,
        updated_at_ms INTEGER NOT NULL,
        FOREIGN KEY(invocation_event_id) REFERENCES invocations(event_id)
      )`,
    ],
  },
];

/** The newest schema version this code can read and write. */
export const LATEST_SCHEMA_VERSION: number = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;

/** Columns each table has at LATEST_SCHEMA_VERSION; update with every migration. */
export const LATEST_TABLE_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  schema_migrations: ["version", "applied_at_ms"],
  sync_state: ["singleton", "next_batch", "initialized", "updated_at_ms", "last_success_ms"],
  room_cursors: ["room_id", "last_timeline_event_id", "updated_at_ms", "baseline_ts_ms"],
  invocations: [
    "event_id", "room_id", "sender_id", "received_at_ms", "status", "raw_event_json", "response_json",
    "matrix_txn_id", "sent_event_id", "attempt_count", "available_at_ms", "last_error_code", "updated_at_ms",
  ],
  bot_events: ["event_id", "room_id", "invocation_event_id", "sent_at_ms"],
  room_conditions: ["room", "code", "since_ms"],
  room_aliases: ["alias", "room_id", "updated_at_ms"],
  e2ee_held: ["event_id", "room_id", "sender_id", "received_at_ms", "raw_event_json", "held_at_ms", "deadline_ms"],
  e2ee_rooms: ["room_id", "since_ms"],
  reply_streams: ["invocation_event_id", "sent_event_id", "last_seq", "updated_at_ms"],
};

/** The highest applied version, or 0 for a database without `schema_migrations`. */
export function readSchemaVersion(db: DatabaseSync): number {
  const table = db.prepare("SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (table === undefined) return 0;
  const row = db.prepare("SELECT MAX(version) AS version FROM schema_migrations").get();
  const version = row?.["version"];
  return typeof version === "number" ? version : 0;
}

/**
 * Applies every migration above the current version up to `targetVersion`
 * in one `BEGIN IMMEDIATE` transaction (the version is re-read inside it), so
 * a reader never sees a half-migrated database at an intermediate version.
 * Returns the versions applied. The caller has refused newer schemas.
 */
export function applyMigrations(db: DatabaseSync, nowMs: number, targetVersion = LATEST_SCHEMA_VERSION): number[] {
  const applied: number[] = [];
  db.exec("BEGIN IMMEDIATE");
  try {
    for (const migration of MIGRATIONS) {
      if (migration.version > targetVersion) break;
      if (readSchemaVersion(db) >= migration.version) continue;
      for (const statement of migration.statements) db.exec(statement);
      db.prepare("INSERT INTO schema_migrations(version, applied_at_ms) VALUES (?, ?)").run(migration.version, nowMs);
      applied.push(migration.version);
    }
    db.exec("COMMIT");
  } catch (error) {
    if (db.isTransaction) db.exec("ROLLBACK");
    throw error;
  }
  return applied;
}
