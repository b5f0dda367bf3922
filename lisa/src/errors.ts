// Typed errors for Lisa. Only `code` (stable snake_case) and `retryable`
// cross into logs, model messages and room messages; `cause` stays internal.

/** Options accepted by every Lisa error. */
export interface LisaErrorOptions {
  readonly retryable?: boolean;
  readonly cause?: unknown;
}

/** Base class of every expected Lisa failure: a stable code plus retryability. */
export class LisaError extends Error {
  /** Stable, non-sensitive snake_case identifier. */
  readonly code: string;
  /** Whether repeating the same operation later may succeed. */
  readonly retryable: boolean;

  constructor(code: string, message: string, options: LisaErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? false;
  }
}

/** Invalid or unusable operator configuration (exit status 78). */
export class ConfigurationError extends LisaError {
  /** One operator-readable line per problem, never containing a secret value. */
  readonly problems: readonly string[];

  constructor(code: string, problems: readonly string[], options: LisaErrorOptions = {}) {
    super(code, problems.join("\n"), { ...options, retryable: false });
    this.problems = problems;
  }
}

/** A Matrix failure that a later attempt may overcome (network, 5xx, 429). */
export class MatrixTransientError extends LisaError {
  constructor(code: string, message: string, options: LisaErrorOptions = {}) {
    super(code, message, { ...options, retryable: true });
  }
}

/** A Matrix failure that repeating will not fix (ordinary 4xx, bad shape). */
export class MatrixPermanentError extends LisaError {
  constructor(code: string, message: string, options: LisaErrorOptions = {}) {
    super(code, message, { ...options, retryable: false });
  }
}

/** A transient LLM failure (network, timeout, 429, 5xx). */
export class LlmTransientError extends LisaError {
  constructor(code: string, message: string, options: LisaErrorOptions = {}) {
    super(code, message, { ...options, retryable: true });
  }
}

/** Malformed or unsupported output from the LLM service. */
export class LlmProtocolError extends LisaError {
  constructor(code: string, message: string, options: LisaErrorOptions = {}) {
    super(code, message, { ...options, retryable: false });
  }
}

/** Tool arguments that failed validation. */
export class ToolInputError extends LisaError {
  constructor(code: string, message: string, options: LisaErrorOptions = {}) {
    super(code, message, { ...options, retryable: false });
  }
}

/** A tool that was called correctly but could not complete. */
export class ToolExecutionError extends LisaError {}

/** An invocation hit one of its iteration, tool, size or time limits. */
export class InvocationLimitError extends LisaError {
  constructor(code: string, message: string, options: LisaErrorOptions = {}) {
    super(code, message, { ...options, retryable: false });
  }
}

/** The state database failed, is corrupt, or is of an unknown schema. */
export class StateStoreError extends LisaError {}

/** Returns the stable code of any thrown value; unknown values map to `internal_error`. */
export function errorCode(error: unknown): string {
  return error instanceof LisaError ? error.code : "internal_error";
}

/** True when the error is a Lisa error that says a later retry may succeed. */
export function isRetryable(error: unknown): boolean {
  return error instanceof LisaError && error.retryable;
}

/** True when the value is an abort caused by an AbortSignal. */
export function isAbortError(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error.name === "AbortError" || error.name === "TimeoutError" || (error as { code?: unknown }).code === "ABORT_ERR")
  );
}

/** The value-or-error result of an expected failure at an I/O boundary. */
export type Result<T, E = LisaError> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: E };

/** Wraps a success value. */
export function ok<T>(value: T): { readonly ok: true; readonly value: T } {
  return { ok: true, value };
}

/** Wraps an expected failure. */
export function err<E>(error: E): { readonly ok: false; readonly error: E } {
  return { ok: false, error };
}
