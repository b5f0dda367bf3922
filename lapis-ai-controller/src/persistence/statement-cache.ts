// Prepared statements kept per SQL text, for the queries whose text is built
// per call (a WHERE of optional filters, an IN list of some length). A
// statement prepared per call is not just parsed again each time: its native
// memory (a few KB of sqlite3_stmt) is invisible to the V8 heap and only freed
// when a full GC finalizes the JS wrapper, so under a steady stream of turns
// it piles up (Deno: about 11 statements a turn, tens of MB over 1000 turns).
// The cache is bounded (least recently used goes first), since the texts of
// some callers (an IN list per request) are many.
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { keptPerKey } from "../domain/keyed-once.ts";

/** Most statements one cache keeps. */
export const STATEMENT_CACHE_MAX = 64;

/** A prepare-once lookup over `db`: the same SQL text answers the same statement. */
export function statementCache(db: DatabaseSync, max = STATEMENT_CACHE_MAX): (sql: string) => StatementSync {
  const kept = keptPerKey((sql) => db.prepare(sql), max);
  return (sql) => kept.get(sql);
}
