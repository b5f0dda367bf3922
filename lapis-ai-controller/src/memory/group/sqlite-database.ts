// The node:sqlite adapter of the group database port (Node 24 and Deno 2.9
// both compile SQLite with FTS5). Statements are prepared once per SQL text
// and cached, so a query on the search path costs no re-parse.
import { DatabaseSync, type StatementSync } from "node:sqlite";
import type { GroupDatabase, SqlRow, SqlValue } from "./database-port.ts";
import { keptPerKey } from "../../domain/keyed-once.ts";

/** How to open a group memory database. */
export type SqliteGroupOptions = {
  /** A file path, or ":memory:". */
  readonly path: string;
  /** How long a write waits for another connection's lock (default 1000 ms, cap 30 s). */
  readonly busyTimeoutMs?: number;
  /** Prepared statements kept (default 64, cap 1024). */
  readonly statementCache?: number;
};

const BUSY_DEFAULT = 1_000;
const BUSY_CAP = 30_000;
const CACHE_DEFAULT = 64;
const CACHE_CAP = 1_024;

function bounded(value: number | undefined, fallback: number, cap: number, name: string): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 0 || v > cap) throw new RangeError(`${name} must be an integer in 0..${cap}`);
  return v;
}

/** Opens (or creates) a database file as the group port; WAL and synchronous=FULL for a file. */
export function openSqliteGroupDatabase(options: SqliteGroupOptions): GroupDatabase {
  const busy = bounded(options.busyTimeoutMs, BUSY_DEFAULT, BUSY_CAP, "busyTimeoutMs");
  const cacheSize = Math.max(1, bounded(options.statementCache, CACHE_DEFAULT, CACHE_CAP, "statementCache"));
  const db = new DatabaseSync(options.path, { timeout: busy });
  if (options.path !== ":memory:") db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = FULL");
  db.exec("PRAGMA foreign_keys = ON");
  const cache = keptPerKey((sql): StatementSync => db.prepare(sql), cacheSize);
  const statement = (sql: string): StatementSync => cache.get(sql);
  return {
    exec: (sql) => db.exec(sql),
    run: (sql, params = []) => ({ changes: Number(statement(sql).run(...params).changes) }),
    get: (sql, params = []) => statement(sql).get(...params) as SqlRow | undefined,
    all: (sql, params = []) => statement(sql).all(...params) as SqlRow[],
    close: () => {
      cache.clear();
      db.close();
    },
  };
}
