// Startup validation's catalog facts in one read (P-STO-41). SQLite builds a
// connection's schema from the `sql` texts of sqlite_master, so a catalog
// whose rows are exactly those schema v1's DDL made (SCHEMA_V1 verbatim, and
// the automatic indexes of its PRIMARY KEY and UNIQUE constraints) proves at
// once what the pragma reads prove one by one: every table present and
// STRICT, the journal's columns as declared with no collation, its UNIQUE
// (thread_id, seq) index and its journal_by_turn index. Any other catalog
// (an extra object, a text written by another build) is not refused here:
// the caller falls back to the pragma reads, which judge it.
import type { DatabaseSync } from "node:sqlite";
import type { Row } from "./rows.ts";
import { SCHEMA_V1 } from "./schema.ts";

/**
 * The automatic indexes SQLite makes for schema v1's constraints (a PRIMARY
 * KEY other than an INTEGER one, each UNIQUE), by table, in constraint order:
 * `sqlite_autoindex_<table>_<n>`, no sql text. Checked against a schema made
 * from SCHEMA_V1 by the tests.
 */
export const V1_AUTOINDEXES: Readonly<Record<string, number>> = {
  threads: 1, turns: 1, commands: 1, journal: 1, interactions: 2, workspace_leases: 1, provider_sessions: 1, auth_sessions: 1,
  preparation_markers: 1,
};

const entry = (type: unknown, name: unknown, table: unknown, sql: unknown) => JSON.stringify([type, name, table, sql]);

/** The catalog rows schema v1 makes, each as `entry` writes it, sorted. */
function v1Catalog(): readonly string[] {
  const rows: string[] = [];
  for (const statement of SCHEMA_V1) {
    const made = /^CREATE (?:UNIQUE )?(TABLE|INDEX) (\w+)(?: ON (\w+))?/.exec(statement);
    if (made === null) continue;
    const [, type, name, on] = made;
    rows.push(entry(type?.toLowerCase(), name, on ?? name, statement));
  }
  for (const [table, count] of Object.entries(V1_AUTOINDEXES)) {
    for (let n = 1; n <= count; n++) rows.push(entry("index", `sqlite_autoindex_${table}_${n}`, table, null));
  }
  return rows.sort();
}

let expected: readonly string[] | undefined;

/** True when the catalog is exactly schema v1's as SCHEMA_V1 made it; false asks the caller for the pragma reads. */
export function catalogIsV1(db: DatabaseSync): boolean {
  expected ??= v1Catalog();
  const rows = (db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master").all() as Row[]).map((r) => entry(r.type, r.name, r.tbl_name, r.sql));
  if (rows.length !== expected.length) return false;
  rows.sort();
  return rows.every((row, i) => row === expected?.[i]);
}
