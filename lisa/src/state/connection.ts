import type { DatabaseSync, StatementSync } from "node:sqlite";
import { StateStoreError } from "../errors.ts";
import { STATE_ERROR_CODES, toStateError } from "./errors.ts";
import type { InstanceLock } from "./lock.ts";

/**
 * One open ledger connection: a statement cache, the clock, and the only
 * transaction helpers. Transactions are synchronous (`BEGIN IMMEDIATE` ...
 * `COMMIT` inside one call), so none can span an await or a network call.
 */
export class LedgerConnection {
  /** Clock in epoch milliseconds. */
  readonly now: () => number;
  /** False for read-only stores: every write is refused before touching SQLite. */
  readonly writable: boolean;
  readonly #db: DatabaseSync;
  readonly #lock: InstanceLock | null;
  readonly #statements = new Map<string, StatementSync>();
  #closed = false;

  constructor(db: DatabaseSync, options: { now: () => number; writable: boolean; lock: InstanceLock | null }) {
    this.#db = db;
    this.now = options.now;
    this.writable = options.writable;
    this.#lock = options.lock;
  }

  /** The instance lock held by this connection (run mode), null read-only. */
  get lock(): InstanceLock | null {
    return this.#lock;
  }

  /** A cached prepared statement. */
  stmt(sql: string): StatementSync {
    this.#assertOpen();
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** Runs `work` (synchronous) in one read snapshot; database failures become StateStoreErrors. */
  read<T>(action: string, work: (nowMs: number) => T): T {
    this.#assertOpen();
    const outer = !this.#db.isTransaction;
    try {
      if (outer) this.#db.exec("BEGIN");
      const result = work(this.now());
      if (outer) this.#db.exec("COMMIT");
      return result;
    } catch (error) {
      if (outer) this.#rollback();
      throw toStateError(error, action);
    }
  }

  /**
   * Runs `work` (synchronous) in one `BEGIN IMMEDIATE` transaction: all of
   * it commits or none of it does, and the connection stays usable after a
   * failure, which is rethrown as a StateStoreError.
   */
  write<T>(action: string, work: (nowMs: number) => T): T {
    this.#assertOpen();
    if (!this.writable) {
      throw new StateStoreError(STATE_ERROR_CODES.readonly, `state store is read-only; ${action} refused`);
    }
    try {
      this.#db.exec("BEGIN IMMEDIATE");
      const result = work(this.now());
      if (typeof (result as { then?: unknown } | null)?.then === "function") {
        throw new StateStoreError(STATE_ERROR_CODES.invalidInput, `${action} must not await inside a transaction`);
      }
      this.#db.exec("COMMIT");
      return result;
    } catch (error) {
      this.#rollback();
      throw toStateError(error, action);
    }
  }

  /** Closes the database, then releases the instance lock; safe to call twice. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#statements.clear();
    try {
      if (this.#db.isOpen) this.#db.close();
    } finally {
      this.#lock?.release();
    }
  }

  #rollback(): void {
    try {
      if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
    } catch {
      // SQLite already rolled back (e.g. after an I/O error); the original error is what matters.
    }
  }

  #assertOpen(): void {
    if (this.#closed) throw new StateStoreError(STATE_ERROR_CODES.closed, "state store is closed");
  }
}
