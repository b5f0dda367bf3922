// Grows a real controller database to a given size for the replay and
// startup rows: rows shaped exactly as the journal writer stores a full-
// retention text event (contiguous seq, stored payload), inserted in one
// transaction while serve is stopped, so startup validation accepts them.
import { DatabaseSync } from "node:sqlite";

const TEXT = "a line of agent text of ordinary length, like most streamed chunks are ";

/** Appends `count` transcript text events to `threadId`; returns the thread's last seq. */
export function seedTranscript(databasePath: string, threadId: string, count: number): number {
  const db = new DatabaseSync(databasePath);
  try {
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
    const start = Number((db.prepare("SELECT coalesce(max(seq), 0) AS seq FROM journal WHERE thread_id = ?").get(threadId) as { seq: number }).seq);
    const insert = db.prepare(`INSERT INTO journal (thread_id, turn_id, seq, visibility, kind, message_id, payload_state, payload, metadata, created_at)
      VALUES (?, NULL, ?, 'transcript', 'text', ?, 'stored', ?, ?, ?)`);
    const at = Date.now();
    db.exec("BEGIN IMMEDIATE");
    for (let i = 1; i <= count; i++) {
      const seq = start + i;
      const messageId = `msg-seed-${Math.floor(seq / 50)}`;
      insert.run(threadId, seq, messageId, JSON.stringify({ text: `${TEXT}${seq}` }), JSON.stringify({ messageId }), at);
    }
    db.exec("COMMIT");
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    return start + count;
  } finally {
    db.close();
  }
}

/** Times `PRAGMA quick_check` on the file (ms), the integrity pass SQLite itself offers. */
export function quickCheckMs(databasePath: string): number {
  const db = new DatabaseSync(databasePath, { readOnly: true });
  try {
    const t0 = performance.now();
    const rows = db.prepare("PRAGMA quick_check").all() as { quick_check: string }[];
    const ms = performance.now() - t0;
    if (rows[0]?.quick_check !== "ok") throw new Error("quick_check failed");
    return ms;
  } finally {
    db.close();
  }
}
