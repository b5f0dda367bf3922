// Deletes the rows naming one thread from another program's SQLite file
// (Codex's `state_N.sqlite`, `thread_history_N.sqlite`, …; execution/codex-erase.ts
// finds the files): every table's `thread_id`, `parent_thread_id` and
// `child_thread_id`, and `threads.id`. Under `PRAGMA secure_delete` the freed
// cells are zeroed, and the TRUNCATE checkpoint leaves no copy in the WAL.
import { DatabaseSync } from "node:sqlite";

const THREAD_COLUMNS = ["thread_id", "parent_thread_id", "child_thread_id"];
/** How long a write waits for the file's other users (a running Codex). */
const BUSY_TIMEOUT_MS = 5_000;

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Deletes the thread's rows from one of Codex's SQLite files; the number of rows. */
export function eraseThreadRows(path: string, threadId: string): number {
  const db = new DatabaseSync(path, { timeout: BUSY_TIMEOUT_MS });
  try {
    db.exec("PRAGMA secure_delete = ON");
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as { name: string }[]).map((t) => t.name);
    let rows = 0;
    db.exec("BEGIN IMMEDIATE");
    try {
      for (const table of tables) {
        const columns = (db.prepare(`PRAGMA table_info(${quote(table)})`).all() as { name: string }[]).map((c) => c.name);
        const keys = [...columns.filter((c) => THREAD_COLUMNS.includes(c)), ...(table === "threads" && columns.includes("id") ? ["id"] : [])];
        for (const key of keys) rows += Number(db.prepare(`DELETE FROM ${quote(table)} WHERE ${quote(key)} = ?`).run(threadId).changes);
      }
      db.exec("COMMIT");
    } catch (caught) {
      db.exec("ROLLBACK");
      throw caught;
    }
    db.prepare("PRAGMA wal_checkpoint(TRUNCATE)").get();
    return rows;
  } finally {
    db.close();
  }
}
