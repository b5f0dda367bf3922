// Schema v1 of the controller database. Every table is STRICT; CHECK
// constraints repeat the vocabularies of domain/records.ts so a bad write
// fails at once, and record-validation.ts re-checks every retained row at
// startup (a CHECK cannot be trusted for rows written by another build).
// Content columns are only `journal.payload`; under metadata-only retention
// it stays NULL and the payload lives in volatile memory.

/** The schema version this build reads and writes. */
export const SCHEMA_VERSION = 1;

const CODE_CHECK = (column: string): string =>
  `(${column} IS NULL OR (length(${column}) BETWEEN 1 AND 64 AND ${column} GLOB '[a-z]*' AND ${column} NOT GLOB '*[^a-z0-9_]*'))`;

const IN = (column: string, values: readonly string[]): string => `${column} IN (${values.map((v) => `'${v}'`).join(", ")})`;

/** Tables in creation (and validation) order. */
export const TABLES = [
  "schema_version",
  "threads",
  "turns",
  "commands",
  "journal",
  "interactions",
  "workspace_leases",
  "provider_sessions",
  "auth_sessions",
  "audit",
  "preparation_markers",
] as const;

/** A table of schema v1. */
export type TableName = (typeof TABLES)[number];

/** The DDL of schema v1, one statement per entry. */
export const SCHEMA_V1: readonly string[] = [
  `CREATE TABLE schema_version (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
    version INTEGER NOT NULL
  ) STRICT`,
  `CREATE TABLE threads (
    thread_id TEXT PRIMARY KEY,
    principal TEXT NOT NULL,
    application TEXT NOT NULL DEFAULT 'owner',
    workspace_id TEXT NOT NULL,
    provider TEXT NOT NULL,
    retention TEXT NOT NULL CHECK (${IN("retention", ["full", "metadata-only"])}),
    restricted INTEGER NOT NULL CHECK (restricted IN (0, 1)),
    config_version INTEGER NOT NULL CHECK (config_version >= 1),
    config TEXT NOT NULL,
    binding TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  ) STRICT`,
  `CREATE TABLE turns (
    turn_id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL REFERENCES threads(thread_id),
    command_id TEXT NOT NULL,
    attempt_of TEXT REFERENCES turns(turn_id),
    state TEXT NOT NULL CHECK (${IN("state", [
      "queued", "preparing", "dispatched", "running", "waiting", "cancelling",
      "completed", "failed", "cancelled", "interrupted", "submission_unknown",
    ])}),
    workspace_id TEXT NOT NULL,
    provider TEXT NOT NULL,
    config_version INTEGER NOT NULL CHECK (config_version >= 1),
    error_code TEXT CHECK ${CODE_CHECK("error_code")},
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  ) STRICT`,
  `CREATE INDEX turns_by_thread ON turns(thread_id, created_at)`,
  `CREATE INDEX turns_by_state ON turns(state)`,
  `CREATE TABLE commands (
    principal TEXT NOT NULL,
    application TEXT NOT NULL,
    command_id TEXT NOT NULL,
    method TEXT NOT NULL,
    input_digest TEXT NOT NULL,
    receipt TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (principal, application, command_id)
  ) STRICT`,
  `CREATE TABLE journal (
    journal_id INTEGER PRIMARY KEY,
    thread_id TEXT NOT NULL REFERENCES threads(thread_id),
    turn_id TEXT REFERENCES turns(turn_id),
    seq INTEGER CHECK (seq IS NULL OR seq >= 1),
    visibility TEXT NOT NULL CHECK (${IN("visibility", ["transcript", "owner"])}),
    kind TEXT NOT NULL CHECK ${CODE_CHECK("kind")},
    message_id TEXT,
    payload_state TEXT NOT NULL CHECK (${IN("payload_state", ["stored", "volatile", "none"])}),
    payload TEXT,
    metadata TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (thread_id, seq),
    CHECK ((visibility = 'transcript') = (seq IS NOT NULL)),
    CHECK ((payload_state = 'stored') = (payload IS NOT NULL))
  ) STRICT`,
  `CREATE INDEX journal_by_turn ON journal(turn_id)`,
  `CREATE TABLE interactions (
    interaction_id TEXT PRIMARY KEY,
    turn_id TEXT NOT NULL REFERENCES turns(turn_id),
    thread_id TEXT NOT NULL REFERENCES threads(thread_id),
    native_request_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (${IN("kind", ["permission", "structured_input", "elicitation"])}),
    state TEXT NOT NULL CHECK (${IN("state", ["pending", "settled", "expired", "cancelled", "closed"])}),
    option_ids TEXT NOT NULL,
    outcome TEXT,
    decided_by TEXT CHECK (decided_by IS NULL OR ${IN("decided_by", ["client", "policy", "host"])}),
    deadline_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    settled_at INTEGER,
    UNIQUE (turn_id, native_request_id)
  ) STRICT`,
  `CREATE TABLE workspace_leases (
    workspace_id TEXT PRIMARY KEY,
    turn_id TEXT NOT NULL REFERENCES turns(turn_id),
    kind TEXT NOT NULL CHECK (${IN("kind", ["lease", "fence"])}),
    acquired_at INTEGER NOT NULL,
    confirm_deadline_at INTEGER
  ) STRICT`,
  `CREATE TABLE provider_sessions (
    thread_id TEXT NOT NULL REFERENCES threads(thread_id),
    provider TEXT NOT NULL,
    native_session_id TEXT NOT NULL,
    binding TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (thread_id, provider)
  ) STRICT`,
  `CREATE TABLE auth_sessions (
    auth_session_id TEXT PRIMARY KEY,
    credential_id TEXT NOT NULL,
    principal TEXT NOT NULL,
    application TEXT NOT NULL,
    scopes TEXT NOT NULL,
    bearer_digest TEXT,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    revoked_at INTEGER
  ) STRICT`,
  `CREATE UNIQUE INDEX auth_sessions_live_per_credential ON auth_sessions(credential_id) WHERE revoked_at IS NULL`,
  `CREATE TABLE audit (
    audit_id INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL CHECK ${CODE_CHECK("action")},
    subject_kind TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    details TEXT NOT NULL
  ) STRICT`,
  `CREATE TABLE preparation_markers (
    turn_id TEXT PRIMARY KEY REFERENCES turns(turn_id),
    thread_id TEXT NOT NULL REFERENCES threads(thread_id),
    config_version INTEGER NOT NULL CHECK (config_version >= 1),
    retention TEXT NOT NULL CHECK (${IN("retention", ["full", "metadata-only"])}),
    approval_requested TEXT NOT NULL CHECK (${IN("approval_requested", ["ask", "allow-all"])}),
    approval_effective TEXT NOT NULL CHECK (${IN("approval_effective", ["ask", "allow-all"])}),
    suppressed_by TEXT CHECK (suppressed_by IS NULL OR suppressed_by = 'restricted'),
    native_mode_requested TEXT,
    native_mode_result TEXT CHECK (native_mode_result IS NULL OR ${IN("native_mode_result", ["applied", "unsupported", "rejected", "unreported"])}),
    payload_volatile INTEGER NOT NULL CHECK (payload_volatile IN (0, 1)),
    prepared_at INTEGER NOT NULL
  ) STRICT`,
  `INSERT INTO schema_version (singleton, version) VALUES (1, ${SCHEMA_VERSION})`,
];
