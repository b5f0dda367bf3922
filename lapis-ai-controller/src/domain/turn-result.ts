// Result values of turn-engine operations: expected refusals are stable
// snake_case codes, never exception text.
import { controllerError, err, isErrorCode, ok as cok, type ControllerError, type Result as CResult } from "./errors.ts";

/** A value or a payload-free refusal code. */
export type Result<T> = { ok: true; value: T } | { ok: false; code: string };

/** Wraps a value. */
export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

/** Wraps a refusal code. */
export function refuse<T = never>(code: string): Result<T> {
  return { ok: false, code };
}

/** A payload-free ControllerError for an engine refusal code. */
export function engineError(code: string): ControllerError {
  return controllerError(isErrorCode(code) ? code : "internal_error");
}

/** Converts an engine result to the protocol's Result shape. */
export function toOutcome<T>(r: Result<T>): CResult<T> {
  return r.ok ? cok(r.value) : err(engineError(r.code));
}
