// Result values of turn-engine operations: expected refusals are stable
// snake_case codes, never exception text.

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
