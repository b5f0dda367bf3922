// DDL of the turn engine's tables (STRICT). Kept beside the foundation schema
// so the engine's accessor owns its own shapes; applied idempotently.

/** Statements creating the turn engine tables. */
export const TURN_SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS engine_threads (
    id TEXT PRIMARY KEY, principal TEXT NOT NULL, application TEXT NOT NULL, workspace_id TEXT NOT NULL,
    provider_id TEXT NOT NULL, restricted INTEGER NOT NULL, approval_policy TEXT NOT NULL,
    requested_mode TEXT, retention TEXT NOT NULL, config_version INTEGER NOT NULL) STRICT`,
  `CREATE TABLE IF NOT EXISTS engine_turns (
    ord INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, thread_id TEXT NOT NULL, command_id TEXT NOT NULL,
    attempt_of TEXT, state TEXT NOT NULL, workspace_id TEXT NOT NULL, config TEXT NOT NULL,
    error_code TEXT, stop_reason TEXT, prompt TEXT) STRICT`,
  `CREATE INDEX IF NOT EXISTS engine_turns_state ON engine_turns(state, ord)`,
  `CREATE TABLE IF NOT EXISTS engine_commands (
    command_id TEXT PRIMARY KEY, method TEXT NOT NULL, input_hash TEXT NOT NULL, receipt TEXT NOT NULL) STRICT`,
  `CREATE TABLE IF NOT EXISTS engine_journal (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, thread_id TEXT NOT NULL, turn_id TEXT, type TEXT NOT NULL,
    visibility TEXT NOT NULL, data TEXT NOT NULL) STRICT`,
  `CREATE INDEX IF NOT EXISTS engine_journal_turn ON engine_journal(turn_id, seq)`,
  `CREATE TABLE IF NOT EXISTS engine_leases (
    workspace_id TEXT PRIMARY KEY, turn_id TEXT NOT NULL, state TEXT NOT NULL) STRICT`,
  `CREATE TABLE IF NOT EXISTS engine_interactions (
    id TEXT PRIMARY KEY, turn_id TEXT NOT NULL, native_request_id TEXT NOT NULL, category TEXT NOT NULL,
    options TEXT NOT NULL, state TEXT NOT NULL, option_id TEXT, decided_by TEXT, deadline_at INTEGER NOT NULL) STRICT`,
  `CREATE INDEX IF NOT EXISTS engine_interactions_turn ON engine_interactions(turn_id)`,
  `CREATE TABLE IF NOT EXISTS engine_audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL,
    turn_id TEXT NOT NULL, data TEXT NOT NULL) STRICT`,
  `CREATE TABLE IF NOT EXISTS engine_provider_sessions (
    thread_id TEXT NOT NULL, provider_id TEXT NOT NULL, native_session_id TEXT NOT NULL,
    PRIMARY KEY (thread_id, provider_id)) STRICT`,
];
