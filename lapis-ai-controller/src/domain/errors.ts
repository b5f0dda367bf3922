// Errors cross every boundary (logs, protocol replies, CLI output, database
// rows) as a stable snake_case code plus `retryable`, never as exception text:
// exception text can carry prompts, paths or secrets. Expected I/O failures
// are values (`Result`); bugs throw.

/** Every stable error code the controller may emit. Add new codes here, never inline strings. */
export const ERROR_CODES = [
  // storage (P-STO)
  "storage_version_unsupported",
  "storage_record_invalid",
  "storage_unavailable",
  "storage_write_failed",
  "instance_locked",
  "transcript_unavailable",
  "payload_unavailable",
  // configuration and CLI
  "config_invalid",
  "config_unreadable",
  "usage_invalid",
  "service_manager_unavailable",
  "service_unavailable",
  "workspace_alias",
  "workspace_not_granted",
  "build_mismatch",
  "readiness_timeout",
  // install, snapshots, service unit, managed child (issue 16)
  "snapshot_invalid",
  "snapshot_smoke_failed",
  "runtime_unsupported",
  "install_failed",
  "managed_start_failed",
  "token_unavailable",
  // protocol, auth, isolation (P-API, AIC-API)
  "protocol_unsupported",
  "unauthorized",
  "forbidden",
  "not_found",
  "invalid_params",
  "method_not_found",
  "frame_too_large",
  "command_conflict",
  "binding_mismatch",
  "version_conflict",
  "thread_busy",
  // protocol frames, sessions, threads and endpoints (issue 13, docs/protocol.md)
  "parse_error",
  "invalid_request",
  "binary_unsupported",
  "hello_required",
  "already_authenticated",
  "attachment_required",
  "thread_exists",
  "reservation_limit",
  "subscription_limit",
  "workspace_unknown",
  "provider_unknown",
  "turns_unavailable",
  "endpoint_not_found",
  "endpoint_limit",
  // turns (P-TRN)
  "turn_active",
  "turn_fenced",
  "confirmation_required",
  "interaction_pending",
  "interaction_expired",
  "interaction_closed",
  "tool_effect_unknown",
  "continuation_evidence_unavailable",
  "provider_setup_failed",
  "submission_unknown",
  // turn engine and ACP executor (issue 14)
  "turn_not_resolvable",
  "turn_transition_invalid",
  "restricted_mode_unavailable",
  "workspace_root_invalid",
  "provider_not_found",
  "provider_launch_invalid",
  "provider_node_unavailable",
  "provider_setup_timeout",
  "provider_exited",
  "provider_error",
  "cancel_unconfirmed",
  "service_restarted",
  "resolved_by_owner",
  // providers, tools, endpoints (P-PRV, P-CAP)
  "endpoint_timeout",
  "endpoint_revoked",
  "endpoint_disconnected",
  "tool_not_found",
  "tool_failed",
  "restricted_tools_forbidden",
  "capture_rejected",
  "scanner_unavailable",
  // native Codex executor (issue 31)
  "mcp_env_reserved",
  // external MCP launch descriptions (issue 31 point 2)
  "mcp_descriptor_invalid",
  "mcp_env_conflict",
  "mcp_env_unavailable",
  "mcp_secret_in_argv",
  "mcp_restricted",
  "mcp_unsupported",
  "mcp_required_failed",
  "provider_busy",
  // context and preparation endpoints (issue 25 point 1)
  "context_failed",
  "context_invalid",
  "context_too_large",
  "preparation_failed",
  "preparation_vetoed",
  // consumer transcript stores (issue 31 point 4)
  "transcript_append_failed",
  // history controls: fork, rollback, steer, compaction (P-HIS)
  "history_unavailable",
  "history_cut_failed",
  "history_too_large",
  "rollback_out_of_range",
  "steer_unsupported",
  "turn_not_running",
  "unsupported",
  // memory (R2, reserved)
  "candidate_rejected",
  // memory endpoints: recall and the read tools (issue 30)
  "candidate_invalid",
  "memory_failed",
  "memory_invalid",
  "evidence_unauthorized",
  "evidence_location_invalid",
  // thread lifecycle: quotas per application
  "quota_exceeded",
  "erase_failed",
  // catch-all for a failure that has no better code; still payload-free
  "internal_error",
] as const;

/** A stable, payload-free error code. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** The shape every short error code must have, also enforced on database columns. */
export const ERROR_CODE_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

const KNOWN_CODES: ReadonlySet<string> = new Set(ERROR_CODES);

/** True when `value` is one of the controller's known error codes. */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && KNOWN_CODES.has(value);
}

/** A failure as a value: a code, whether a retry may succeed, and optionally a key path (never a value). */
export interface ControllerError {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  /** Where the failure sits (a config key path, a table name); never user data. */
  readonly where?: string;
  /** Which check refused (a stable snake_case or keyword name, such as `pattern_ambiguous`); never user data. */
  readonly rule?: string;
  /** When a retry can succeed (ms since the epoch), where the refusal knows it (e.g. `quota_exceeded`). */
  readonly retryAt?: number;
}

/** Builds a ControllerError; `retryable` defaults to false. */
export function controllerError(code: ErrorCode, options: { retryable?: boolean; where?: string; rule?: string; retryAt?: number } = {}): ControllerError {
  const error: { code: ErrorCode; retryable: boolean; where?: string; rule?: string; retryAt?: number } = { code, retryable: options.retryable ?? false };
  if (options.where !== undefined) error.where = options.where;
  if (options.rule !== undefined) error.rule = options.rule;
  if (options.retryAt !== undefined) error.retryAt = options.retryAt;
  return error;
}

/** The result of an operation whose failure is expected (I/O, validation, authorization). */
export type Result<T, E = ControllerError> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: E };

/** A successful Result. */
export function ok<T>(value: T): { readonly ok: true; readonly value: T } {
  return { ok: true, value };
}

/** A failed Result. */
export function err<E = ControllerError>(error: E): { readonly ok: false; readonly error: E } {
  return { ok: false, error };
}

/**
 * A ControllerError carried through a throw, for the few places that must
 * unwind (a transaction body rolling back). Its message is the code only.
 */
export class ControllerFailure extends Error {
  /** The payload-free failure. */
  readonly failure: ControllerError;

  constructor(failure: ControllerError) {
    super(failure.code);
    this.name = "ControllerFailure";
    this.failure = failure;
  }
}

/** The ControllerError of a caught value: its own if it is a ControllerFailure, else `fallback`. */
export function failureOf(caught: unknown, fallback: ErrorCode = "internal_error"): ControllerError {
  if (caught instanceof ControllerFailure) return caught.failure;
  return controllerError(fallback);
}
