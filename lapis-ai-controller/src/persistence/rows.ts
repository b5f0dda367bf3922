// Small, total conversions between SQLite rows and domain values. Readers
// trust rows because startup validated every one (record-validation.ts).

import type { SQLInputValue } from "node:sqlite";
import type { Json } from "../domain/records.ts";
import { textOf } from "./nul-text.ts";

/** A row as node:sqlite returns it. */
export type Row = Record<string, SQLInputValue | undefined>;

/** The text column `name` of a row (a free text read as its BLOB decoded: nul-text.ts). */
export function text(row: Row, name: string): string {
  return textOf(row[name]);
}

/** The nullable text column `name` of a row. */
export function textOrNull(row: Row, name: string): string | null {
  const value = row[name];
  return value === null || value === undefined ? null : textOf(value);
}

/** The integer column `name` of a row. */
export function int(row: Row, name: string): number {
  return Number(row[name]);
}

/** The nullable integer column `name` of a row. */
export function intOrNull(row: Row, name: string): number | null {
  const value = row[name];
  return value === null || value === undefined ? null : Number(value);
}

/** The JSON column `name` of a row, parsed. */
export function json<T = Json>(row: Row, name: string): T {
  return JSON.parse(String(row[name])) as T;
}

/** A value serialized for a JSON column. */
export function toJson(value: unknown): string {
  return JSON.stringify(value);
}

/** SQLITE_BUSY and SQLITE_LOCKED: another connection holds the lock. */
export const SQLITE_BUSY = 5;
export const SQLITE_LOCKED = 6;

/**
 * The SQLite primary result code of a caught error, or undefined. Node sets
 * `errcode`; Deno's node:sqlite (2.9) sets only the message, which is
 * SQLite's own errstr, so the code is read back from it.
 */
export function primaryCode(error: unknown): number | undefined {
  const errcode = (error as { errcode?: unknown } | null)?.errcode;
  if (typeof errcode === "number") return errcode & 0xff;
  const message = error instanceof Error ? error.message : "";
  if (/^database is locked\b/.test(message)) return SQLITE_BUSY;
  if (/^database table is locked\b/.test(message)) return SQLITE_LOCKED;
  if (/constraint failed/.test(message)) return SQLITE_CONSTRAINT;
  return undefined;
}

/** SQLITE_CONSTRAINT: a uniqueness, CHECK or foreign-key violation. */
export const SQLITE_CONSTRAINT = 19;
