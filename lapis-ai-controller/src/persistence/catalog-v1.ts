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

/** A catalog row: type, table and sql text (null for an automatic index). */
type CatalogRow = readonly [type: string, table: string, sql: string | null];

/** The catalog rows schema v1 makes, by name. */
function v1Catalog(): ReadonlyMap<string, CatalogRow> {
  const rows = new Map<string, CatalogRow>();
  for (const statement of SCHEMA_V1) {
    const made = /^CREATE (?:UNIQUE )?(TABLE|INDEX) (\w+)(?: ON (\w+))?/.exec(statement);
    if (made === null) continue;
    const [, type = "", name = "", on] = made;
    rows.set(name, [type.toLowerCase(), on ?? name, statement]);
  }
  for (const [table, count] of Object.entries(V1_AUTOINDEXES)) {
    for (let n = 1; n <= count; n++) rows.set(`sqlite_autoindex_${table}_${n}`, ["index", table, null]);
  }
  return rows;
}

let expected: ReadonlyMap<string, CatalogRow> | undefined;

/** True when the catalog is exactly schema v1's as SCHEMA_V1 made it; false asks the caller for the pragma reads. */
export function catalogIsV1(db: DatabaseSync): boolean {
  const v1 = expected ??= v1Catalog();
  const rows = db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master").all() as Row[];
  // As many rows as v1 has, each a distinct name of v1's with v1's type, table and text (a catalog written around SQLite may repeat a name).
  const seen = new Set<unknown>();
  return rows.length === v1.size && rows.every((r) => {
    const want = typeof r.name === "string" ? v1.get(r.name) : undefined;
    if (want === undefined || seen.has(r.name)) return false;
    seen.add(r.name);
    return r.type === want[0] && r.tbl_name === want[1] && r.sql === want[2];
  });
}
