// Storage of the thread lifecycle (domain/thread-lifecycle.ts): the
// `threads.list` query, a thread's turns and native session, and erasure.
// Erasure deletes every row of a thread under `PRAGMA secure_delete` (SQLite
// then overwrites the freed cells and pages with zeros instead of leaving them
// in the file), and the checkpoint that follows copies the zeroed pages into
// the database file and truncates the WAL, so no earlier page image keeps the
// bytes either (P-LIF-04).
import type { Actor } from "../domain/commands.ts";
import type { LifecycleStore, ThreadListQuery, ThreadListRow } from "../domain/thread-lifecycle.ts";
import { ControllerFailure, controllerError } from "../domain/errors.ts";
import type { TurnState } from "../domain/records.ts";
import { auditStore } from "./audit.ts";
import { commandStore } from "./command-store.ts";
import type { StoreHandle } from "./handle.ts";
import { freeTextColumn } from "./nul-text.ts";
import { int, text, textOrNull, type Row } from "./rows.ts";
import { statementCache } from "./statement-cache.ts";
import { forgetThreadRow } from "./thread-store.ts";

/** States in which a thread counts as active in a list (queued or in flight). */
const ACTIVE = ["queued", "preparing", "dispatched", "running", "waiting", "cancelling"];

const LIST_SQL = `WITH t AS (
  SELECT th.thread_id, th.principal, th.workspace_id, th.provider, th.config, th.created_at,
    coalesce((SELECT max(seq) FROM journal WHERE thread_id = th.thread_id), 0) AS last_seq,
    (SELECT count(*) FROM turns WHERE thread_id = th.thread_id) AS turn_count,
    EXISTS (SELECT 1 FROM turns WHERE thread_id = th.thread_id AND state IN (${ACTIVE.map((s) => `'${s}'`).join(", ")})) AS active
  FROM threads th WHERE th.principal = ? AND th.application = ?
), a AS (
  SELECT t.*, max(t.created_at, coalesce((SELECT created_at FROM journal WHERE thread_id = t.thread_id AND seq = t.last_seq), 0)) AS last_at FROM t
)
SELECT * FROM a`;

function inList(column: string, values: readonly string[], args: (string | number)[]): string {
  args.push(...values);
  return `${column} IN (${values.map(() => "?").join(", ")})`;
}

function promptText(payload: string | null): string | null {
  if (payload === null) return null;
  try {
    const v = JSON.parse(payload) as { text?: unknown };
    return typeof v.text === "string" && v.text.trim() !== "" ? v.text : null;
  } catch {
    return null;
  }
}

/** The LifecycleStore over a store handle. */
export function lifecycleStore(handle: StoreHandle): LifecycleStore {
  const { db } = handle;
  const commands = commandStore(handle);
  const audit = auditStore(handle);
  const firstPrompt = db.prepare("SELECT payload FROM journal WHERE thread_id = ? AND kind = 'user_prompt' AND payload IS NOT NULL ORDER BY seq LIMIT 1");
  const turnStates = db.prepare("SELECT turn_id, state FROM turns WHERE thread_id = ? ORDER BY created_at, rowid");
  const session = db.prepare(`SELECT provider, ${freeTextColumn(db, "native_session_id")} FROM provider_sessions WHERE thread_id = ? ORDER BY updated_at DESC LIMIT 1`);
  const erase = [
    "DELETE FROM workspace_leases WHERE turn_id IN (SELECT turn_id FROM turns WHERE thread_id = ?)",
    "DELETE FROM journal WHERE thread_id = ?",
    "DELETE FROM interactions WHERE thread_id = ?",
    "DELETE FROM preparation_markers WHERE thread_id = ?",
    "DELETE FROM provider_sessions WHERE thread_id = ?",
  ].map((sql) => db.prepare(sql));
  // Receipts name the thread or its turns (turns.submit keeps the application's sourceRef): they go too.
  const eraseCommands = db.prepare(`DELETE FROM commands WHERE principal = ? AND application = ? AND (json_extract(receipt, '$.threadId') = ?
    OR json_extract(receipt, '$.turnId') IN (SELECT turn_id FROM turns WHERE thread_id = ?))`);
  const idle = db.prepare(`${LIST_SQL.replace("WHERE th.principal = ? AND th.application = ?", "WHERE th.application = ?")} WHERE last_at < ? AND active = 0 ORDER BY last_at LIMIT ?`);
  const eraseTurns = db.prepare("DELETE FROM turns WHERE thread_id = ?");
  const eraseThread = db.prepare("DELETE FROM threads WHERE thread_id = ?");
  const statement = statementCache(db);
  return {
    transact: handle.transact,
    commands,
    list(q: ThreadListQuery): readonly ThreadListRow[] {
      const args: (string | number)[] = [q.principal, q.application];
      const where: string[] = [];
      if (q.workspaces !== null) where.push(q.workspaces.length === 0 ? "0" : inList("workspace_id", q.workspaces, args));
      if (q.providers !== null) where.push(q.providers.length === 0 ? "0" : inList("provider", q.providers, args));
      if (q.threadIds !== undefined) where.push(q.threadIds.length === 0 ? "0" : inList("thread_id", q.threadIds, args));
      if (q.state !== undefined) where.push(q.state === "active" ? "active = 1" : "active = 0");
      if (q.activeSince !== undefined) { where.push("last_at >= ?"); args.push(q.activeSince); }
      if (q.activeBefore !== undefined) { where.push("last_at < ?"); args.push(q.activeBefore); }
      if (q.after !== undefined) { where.push("(last_at < ? OR (last_at = ? AND thread_id < ?))"); args.push(q.after.at, q.after.at, q.after.threadId); }
      const sql = `${LIST_SQL}${where.length > 0 ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY last_at DESC, thread_id DESC LIMIT ?`;
      args.push(q.limit);
      return (statement(sql).all(...args) as Row[]).map((row) => {
        const threadId = text(row, "thread_id");
        const config = JSON.parse(text(row, "config")) as { title?: unknown };
        const title = typeof config.title === "string" && config.title.trim() !== "" ? config.title : null;
        const prompt = title === null ? (firstPrompt.get(threadId) as Row | undefined) : undefined;
        return {
          threadId, workspace: text(row, "workspace_id"), provider: text(row, "provider"), title,
          firstPrompt: prompt === undefined ? null : promptText(textOrNull(prompt, "payload")),
          createdAt: int(row, "created_at"), lastActivityAt: int(row, "last_at"), turnCount: int(row, "turn_count"),
          active: int(row, "active") === 1, lastSeq: int(row, "last_seq"),
        };
      });
    },
    turnStates: (threadId) => (turnStates.all(threadId) as Row[]).map((r) => ({ turnId: text(r, "turn_id"), state: text(r, "state") as TurnState })),
    nativeSession(threadId) {
      const row = session.get(threadId) as Row | undefined;
      return row === undefined ? null : { provider: text(row, "provider"), nativeSessionId: text(row, "native_session_id") };
    },
    eraseRows(threadId: string, owner: Actor): void {
      db.exec("PRAGMA secure_delete = ON");
      try {
        for (const statement of erase) statement.run(threadId);
        eraseCommands.run(owner.principal, owner.application, threadId, threadId);
        eraseTurns.run(threadId);
        forgetThreadRow(handle, threadId);
        eraseThread.run(threadId);
      } finally {
        db.exec("PRAGMA secure_delete = OFF");
      }
      handle.volatile.dropThread(threadId);
    },
    audit(threadId, actor, at): void {
      const recorded = audit.record({ at, actor, action: "thread_deleted", subjectKind: "thread", subjectId: threadId, details: {} });
      if (!recorded.ok) throw new ControllerFailure(controllerError("storage_write_failed", { where: "audit" }));
    },
    idleThreads: (application, before, limit) => (idle.all(application, before, limit) as Row[]).map((r) => ({ threadId: text(r, "thread_id"), principal: text(r, "principal") })),
    checkpoint(): boolean {
      handle.flush();
      const row = db.prepare("PRAGMA wal_checkpoint(TRUNCATE)").get() as { busy?: number } | undefined;
      return Number(row?.busy ?? 1) === 0;
    },
  };
}
