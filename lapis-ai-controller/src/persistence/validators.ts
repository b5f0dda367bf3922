// Primitive checks for startup validation of retained rows. Each answers a
// boolean only: a validator never echoes the value it rejected.

import { ERROR_CODE_PATTERN } from "../domain/errors.ts";
import { textOf } from "./nul-text.ts";
import type { Row } from "./rows.ts";

/** Identifiers (thread, turn, command, principal, application, workspace, provider ids). */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$/;

/** A row field check. */
export type Check = (value: unknown) => boolean;

/** A non-empty identifier. */
export const id: Check = (v) => typeof v === "string" && ID_PATTERN.test(v);
/** An identifier or null. */
export const idOrNull: Check = (v) => v === null || id(v);
/** A non-empty string of at most 1,024 characters; one holding a NUL may come as its BLOB (journal-validation.ts nulSafe). */
export const shortText: Check = (v) => typeof v === "string" ? v.length > 0 && v.length <= 1_024 : v instanceof Uint8Array && shortText(textOf(v));
/** A short string or null. */
export const shortTextOrNull: Check = (v) => v === null || shortText(v);
/** A safe non-negative integer (timestamps, counters). */
export const count: Check = (v) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
/** A count or null. */
export const countOrNull: Check = (v) => v === null || count(v);
/** A positive integer. */
export const positive: Check = (v) => count(v) && (v as number) >= 1;
/** 0 or 1. */
export const flag: Check = (v) => v === 0 || v === 1;
/** A short snake_case code or null (P-STO-08). */
export const codeOrNull: Check = (v) => v === null || (typeof v === "string" && ERROR_CODE_PATTERN.test(v));

/** One of `values`. */
export function oneOf(values: readonly string[]): Check {
  return (v) => typeof v === "string" && values.includes(v);
}

/** One of `values` or null. */
export function oneOfOrNull(values: readonly string[]): Check {
  const inner = oneOf(values);
  return (v) => v === null || inner(v);
}

function parse(v: unknown): { ok: boolean; value?: unknown } {
  if (typeof v !== "string") return { ok: false };
  try {
    return { ok: true, value: JSON.parse(v) };
  } catch {
    return { ok: false };
  }
}

/** A JSON text holding an object. */
export const jsonObject: Check = (v) => {
  const parsed = parse(v);
  return parsed.ok && parsed.value !== null && typeof parsed.value === "object" && !Array.isArray(parsed.value);
};

/** A JSON text holding any value. */
export const jsonAny: Check = (v) => parse(v).ok;

/** A JSON text holding an array of identifiers-or-short strings. */
export const jsonStringList: Check = (v) => {
  const parsed = parse(v);
  return parsed.ok && Array.isArray(parsed.value) && parsed.value.every((item) => shortText(item));
};

/** A JSON text accepted by `inner` after parsing. */
export function jsonWith(inner: (value: unknown) => boolean): Check {
  return (v) => {
    const parsed = parse(v);
    return parsed.ok && inner(parsed.value);
  };
}

/** True when every listed column of `row` passes its check and the row has no other columns. */
export function rowMatches(row: Row, shape: Readonly<Record<string, Check>>): boolean {
  const columns = Object.keys(row);
  if (columns.length !== Object.keys(shape).length) return false;
  return Object.entries(shape).every(([column, check]) => column in row && check(row[column]));
}
