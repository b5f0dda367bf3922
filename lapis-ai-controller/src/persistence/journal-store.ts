// The ordered owner journal and its public transcript view. Transcript rows
// get a contiguous per-thread sequence whatever the retention (P-STO-13);
// under metadata-only retention their payload never reaches SQLite and lives
// in volatile capture, so a lost payload is reported, never invented.

import { controllerError, err, ok, type Result } from "../domain/errors.ts";
import type { JournalAppend, JournalStore, ReplayEvent, ReplayResult } from "../domain/ports.ts";
import type { JournalMetadata, JournalRecord, Json, PayloadState } from "../domain/records.ts";
import type { StoreHandle } from "./handle.ts";
import { readMetadata, readPayload, storedColumns, storedMetadata, validMetadata, validKind } from "./journal-rules.ts";
import { allColumns, freeTextColumn } from "./nul-text.ts";
import { int, intOrNull, text, textOrNull, type Row } from "./rows.ts";
import { keptThreadRow } from "./thread-store.ts";

const retentionFromRow = (row: Row | undefined): string | undefined => (row === undefined ? undefined : text(row, "retention"));

/** Maps a validated `journal` row to its record. */
export function journalFromRow(row: Row, withPayload: boolean): JournalRecord {
  const payloadState = text(row, "payload_state") as PayloadState;
  const messageId = textOrNull(row, "message_id");
  const metadata = text(row, "metadata");
  return {
    journalId: int(row, "journal_id"),
    threadId: text(row, "thread_id"),
    turnId: textOrNull(row, "turn_id"),
    seq: intOrNull(row, "seq"),
    visibility: text(row, "visibility") as JournalRecord["visibility"],
    kind: text(row, "kind"),
    messageId,
    payloadState,
    // A chunk's payload column may hold its raw text (rawChunkText, P-STO-42); a NUL-holding one is read as its BLOB (nul-text.ts).
    payload: withPayload && payloadState === "stored" ? readPayload(row.kind, messageId, metadata, text(row, "payload")) as Json : null,
    // A chunk's `{}` (and its `[]`) stands for its message id (storedMetadata, P-STO-40).
    metadata: readMetadata(row.kind, messageId, metadata) as JournalMetadata,
    createdAt: int(row, "created_at"),
  };
}

const OWNER_PAGE_MAX = 10_000;

/** The most transcript rows one replay page reads, whatever the caller asks. */
export const REPLAY_PAGE_MAX = 10_000;

/**
 * One replay page. Cursor and LIMIT are in the query: the (thread_id, seq)
 * unique index seeks to the cursor, so a page costs the same in a long thread
 * as in a short one.
 */
export const REPLAY_PAGE_SQL = replayPageSql("*");

/** The replay page selecting `columns` (allColumns: `*`, or the list that keeps a message id holding a NUL whole). */
export function replayPageSql(columns: string): string {
  return `SELECT ${columns} FROM journal WHERE thread_id = ? AND seq > ? ORDER BY seq LIMIT ?`;
}

/** The JournalStore port over a store handle. */
export function journalStore(handle: StoreHandle): JournalStore {
  const { db } = handle;
  const retentionOf = db.prepare("SELECT retention FROM threads WHERE thread_id = ?");
  const maxSeq = db.prepare("SELECT coalesce(max(seq), 0) AS seq FROM journal WHERE thread_id = ?");
  const insert = db.prepare(`INSERT INTO journal (thread_id, turn_id, seq, visibility, kind, message_id, payload_state, payload, metadata, created_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const columns = allColumns(db, "journal");
  const transcript = db.prepare(replayPageSql(columns));
  const owner = db.prepare(`SELECT ${columns} FROM journal WHERE journal_id > ? ORDER BY journal_id LIMIT ?`);
  // Owner rows have no seq: the (thread_id, seq) index finds a thread's quickly.
  const fact = db.prepare(`SELECT kind, ${freeTextColumn(db, "message_id")}, metadata FROM journal WHERE thread_id = ? AND seq IS NULL AND turn_id IS NULL AND kind = ? ORDER BY journal_id DESC LIMIT 1`);
  const lastSeq = (threadId: string): number => int(maxSeq.get(threadId) as Row, "seq");

  return {
    append(entry: JournalAppend): Result<JournalRecord> {
      if (!validKind(entry.kind)) return err(controllerError("invalid_params", { where: "journal.kind" }));
      const metadata = entry.metadata ?? {};
      if (!validMetadata(metadata)) return err(controllerError("invalid_params", { where: "journal.metadata" }));
      const storedText = storedMetadata(entry.kind, entry.messageId ?? null, metadata);
      if (storedText === undefined) return err(controllerError("invalid_params", { where: "journal.metadata" }));
      return handle.transact(() => {
        // The thread's kept row answers its retention without a read (P-PRF-16); a row not kept is read.
        const retention = keptThreadRow(handle, entry.threadId)?.retention ?? retentionFromRow(retentionOf.get(entry.threadId) as Row | undefined);
        if (retention === undefined) return err(controllerError("not_found", { where: "journal.thread" }));
        const volatile = retention === "metadata-only";
        const seq = entry.visibility === "transcript" ? lastSeq(entry.threadId) + 1 : null;
        const hasPayload = entry.payload !== undefined;
        const payloadState: PayloadState = !hasPayload ? "none" : volatile ? "volatile" : "stored";
        // A stored chunk's payload `{"text": <string>}` is kept as the text itself beside metadata `[]` (P-STO-42).
        const stored = storedColumns(entry.kind, entry.messageId ?? null, storedText, payloadState === "stored" ? entry.payload : undefined);
        const result = insert.run(entry.threadId, entry.turnId, seq, entry.visibility, entry.kind, entry.messageId ?? null,
          payloadState, stored.payload, stored.metadata, entry.createdAt);
        // Volatile capture is filled only after the row is in, so a failed insert leaves nothing behind.
        if (payloadState === "volatile" && seq !== null) handle.volatile.put(entry.threadId, seq, entry.payload as Json);
        return ok({
          journalId: Number(result.lastInsertRowid),
          threadId: entry.threadId,
          turnId: entry.turnId,
          seq,
          visibility: entry.visibility,
          kind: entry.kind,
          messageId: entry.messageId ?? null,
          payloadState,
          payload: payloadState === "stored" ? (entry.payload as Json) : null,
          metadata,
          createdAt: entry.createdAt,
        });
      });
    },
    replay(threadId, afterSeq = 0, limit = REPLAY_PAGE_MAX): ReplayResult {
      const events: ReplayEvent[] = [];
      let missing = false;
      const page = Math.max(1, Math.min(Math.floor(limit), REPLAY_PAGE_MAX));
      for (const row of transcript.iterate(threadId, afterSeq, page) as Iterable<Row>) {
        const record = journalFromRow(row, true);
        const seq = record.seq as number;
        const base = { seq, turnId: record.turnId, kind: record.kind, messageId: record.messageId, metadata: record.metadata, createdAt: record.createdAt };
        if (record.payloadState === "stored") events.push({ ...base, payload: record.payload as Json });
        else if (record.payloadState === "none") events.push(base);
        else {
          const payload = handle.volatile.get(threadId, seq);
          // A lost payload marks its own event only; the rest of the page is served.
          if (payload === undefined) {
            missing = true;
            events.push({ ...base, payloadUnavailable: true });
          } else events.push({ ...base, payload });
        }
      }
      return { events, complete: !missing, unavailable: missing ? controllerError("transcript_unavailable") : null };
    },
    ownerJournal(afterJournalId = 0, limit = 1_000): readonly JournalRecord[] {
      const page = Math.max(1, Math.min(Math.floor(limit), OWNER_PAGE_MAX));
      return (owner.all(afterJournalId, page) as Row[]).map((row) => journalFromRow(row, false));
    },
    lastSeq,
    lastThreadFact(threadId, kind) {
      const row = fact.get(threadId, kind) as Row | undefined;
      return row === undefined ? undefined : readMetadata(row.kind, textOrNull(row, "message_id"), text(row, "metadata")) as JournalRecord["metadata"];
    },
  };
}
