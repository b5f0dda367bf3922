// Grows a real controller database to a given size for the replay and
// startup rows: rows shaped exactly as the journal writer stores a full-
// retention text event (contiguous seq, stored payload; for the startup row
// also their turn, as real rows name one), inserted in one transaction while
// serve is stopped, so startup validation accepts them. Their metadata and
// payload are stored as the writer stores a chunk's (journal-rules.ts
// storedMetadata, storedColumns: `[]` beside the raw text, P-STO-42). Each
// seeded turn also has the preparation marker serve writes for every
// prepared turn (engine-store.ts setTurnConfig, P-STO-07): its row built and
// judged by the marker store's own code (preparation-markers.ts), so the
// seed cannot drift from what serve stores.
import { DatabaseSync } from "node:sqlite";
import { prepareApproval } from "../../src/domain/approval-policy.ts";
import type { PreparationMarkerRecord } from "../../src/domain/records.ts";
import { storedColumns, storedMetadata } from "../../src/persistence/journal-rules.ts";
import { preparationMarkerRow, validPreparationMarkerRow } from "../../src/persistence/preparation-markers.ts";

const TEXT = "a line of agent text of ordinary length, like most streamed chunks are ";

/** How seeded rows are shaped beyond the defaults. */
export interface SeedShape {
  /**
   * Rows per turn: when set, every row names a turn (`turn-seed-<n>`, one per
   * this many rows), and each turn has its row (completed) and the receipt
   * of the `turns.submit` command that made it, and its preparation marker,
   * as real rows and turns do; unset, rows name no turn.
   */
  readonly rowsPerTurn?: number;
}

/** Appends `count` transcript text events to `threadId`; returns the thread's last seq. */
export function seedTranscript(databasePath: string, threadId: string, count: number, shape: SeedShape = {}): number {
  const db = new DatabaseSync(databasePath);
  try {
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
    const start = Number((db.prepare("SELECT coalesce(max(seq), 0) AS seq FROM journal WHERE thread_id = ?").get(threadId) as { seq: number }).seq);
    const insert = db.prepare(`INSERT INTO journal (thread_id, turn_id, seq, visibility, kind, message_id, payload_state, payload, metadata, created_at)
      VALUES (?, ?, ?, 'transcript', 'text', ?, 'stored', ?, ?, ?)`);
    const turn = db.prepare(`INSERT OR IGNORE INTO turns (turn_id, thread_id, command_id, attempt_of, state, workspace_id, provider, config_version,
      error_code, created_at, updated_at) SELECT ?, thread_id, ?, NULL, 'completed', workspace_id, provider, config_version, NULL, ?, ?
      FROM threads WHERE thread_id = ?`);
    const command = db.prepare(`INSERT OR IGNORE INTO commands (principal, application, command_id, method, input_digest, receipt, created_at)
      SELECT principal, application, ?, 'turns.submit', ?, ?, ? FROM threads WHERE thread_id = ?`);
    const at = Date.now();
    const marker = markerWriter(db, threadId, at);
    db.exec("BEGIN IMMEDIATE");
    for (let i = 1; i <= count; i++) {
      const seq = start + i;
      const messageId = `msg-seed-${Math.floor(seq / 50)}`;
      let turnId: string | null = null;
      if (shape.rowsPerTurn !== undefined) {
        const n = Math.floor((seq - 1) / shape.rowsPerTurn);
        turnId = `turn-seed-${n}`;
        if ((seq - 1) % shape.rowsPerTurn === 0 || i === 1) {
          turn.run(turnId, `cmd-seed-${n}`, at, at, threadId);
          const receipt = JSON.stringify({ commandId: `cmd-seed-${n}`, turnId, threadId, state: "queued" });
          command.run(`cmd-seed-${n}`, `sha256:${n.toString(16).padStart(64, "0")}`, receipt, at, threadId);
          marker(turnId);
        }
      }
      const metadata = storedMetadata("text", messageId, { messageId });
      if (metadata === undefined) throw new Error("the seed's chunk metadata has no stored form");
      const stored = storedColumns("text", messageId, metadata, { text: `${TEXT}${seq}` });
      insert.run(threadId, turnId, seq, messageId, stored.payload, stored.metadata, at);
    }
    db.exec("COMMIT");
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    return start + count;
  } finally {
    db.close();
  }
}

/**
 * Writes a turn's preparation marker as serve's setTurnConfig does for a turn
 * of `threadId` prepared now: the thread's config version, retention and
 * approval policy (restricted suppression applied), the requested mode the
 * thread names, and the result an ACP session without a mode plan reports
 * (`unreported`). The row is the marker store's and passes its validator.
 */
function markerWriter(db: DatabaseSync, threadId: string, at: number): (turnId: string) => void {
  const thread = db.prepare("SELECT config_version, retention, restricted, config FROM threads WHERE thread_id = ?").get(threadId) as
    { config_version: number; retention: PreparationMarkerRecord["retention"]; restricted: number; config: string } | undefined;
  if (thread === undefined) throw new Error("the seed's thread does not exist");
  const config = JSON.parse(thread.config) as { approvalPolicy?: unknown; requestedMode?: unknown };
  const approval = prepareApproval(config.approvalPolicy === "allow-all" ? "allow-all" : "ask", thread.restricted === 1);
  const requestedMode = typeof config.requestedMode === "string" ? config.requestedMode : null;
  let insert: ReturnType<DatabaseSync["prepare"]> | undefined;
  return (turnId) => {
    const row = preparationMarkerRow({
      turnId, threadId, configVersion: thread.config_version, retention: thread.retention,
      approvalRequested: approval.requested, approvalEffective: approval.effective, suppressedBy: approval.suppressedBy,
      nativeModeRequested: requestedMode, nativeModeResult: "unreported", payloadVolatile: thread.retention === "metadata-only", preparedAt: at,
    });
    if (!validPreparationMarkerRow(row)) throw new Error("the seed's preparation marker is not valid");
    const columns = Object.keys(row);
    insert ??= db.prepare(`INSERT OR IGNORE INTO preparation_markers (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`);
    insert.run(...columns.map((c) => row[c] ?? null));
  };
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
