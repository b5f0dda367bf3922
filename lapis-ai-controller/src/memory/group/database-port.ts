// The database port of the group memory profile: the few synchronous SQL
// calls the profile makes. The shipped adapter is node:sqlite
// (sqlite-database.ts); a consumer may hand in its own connection as long as
// its SQLite has FTS5 and `bm25()`. Every call is synchronous, so a write and
// the index update it implies never span an await.

/** A value SQLite binds or answers. */
export type SqlValue = string | number | bigint | null | Uint8Array;

/** One answered row, by column name. */
export type SqlRow = Readonly<Record<string, SqlValue>>;

/** The synchronous SQL the group profile needs. */
export interface GroupDatabase {
  /** Runs statements without parameters (schema, pragmas). */
  exec(sql: string): void;
  /** Runs one statement; the number of rows it changed. */
  run(sql: string, params?: readonly SqlValue[]): { changes: number };
  /** The first answered row, or undefined. */
  get(sql: string, params?: readonly SqlValue[]): SqlRow | undefined;
  /** Every answered row, in order. */
  all(sql: string, params?: readonly SqlValue[]): SqlRow[];
  /** Closes the connection; later calls throw. */
  close(): void;
}

/** Runs `work` in one BEGIN IMMEDIATE transaction: committed when it returns, rolled back when it throws. */
export function inTransaction<T>(db: GroupDatabase, work: () => T): T {
  db.exec("BEGIN IMMEDIATE");
  let result: T;
  try {
    result = work();
  } catch (cause) {
    db.exec("ROLLBACK");
    throw cause;
  }
  db.exec("COMMIT");
  return result;
}

/**
 * Placeholders for an `IN (…)` list of `values`, padded with NULLs (which
 * match nothing) to the next power of two: a few statement texts serve every
 * list length, so a statement cache keeps them prepared.
 */
export function inList(values: readonly SqlValue[]): { marks: string; params: SqlValue[] } {
  let size = 8;
  while (size < values.length) size *= 2;
  const params: SqlValue[] = [...values];
  while (params.length < size) params.push(null);
  return { marks: params.map(() => "?").join(", "), params };
}
