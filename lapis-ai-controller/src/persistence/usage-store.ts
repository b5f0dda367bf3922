// Usage reads (domain/token-usage.ts): a turn's newest `token_usage` report,
// totals per thread, owner and application, and the facts quotas check.
// Reports are journal metadata, so the figures survive metadata-only retention.
import { figuresFromMetadata, sumUsage, type TokenFigures, type UsageReader } from "../domain/token-usage.ts";
import { DatabaseSync } from "node:sqlite";
import { isAbsolute } from "node:path";
import { controllerError, err, ok, type Result } from "../domain/errors.ts";
import type { StoreHandle } from "./handle.ts";
import { int, text, textOrNull, type Row } from "./rows.ts";

const ACTIVE = "('queued', 'preparing', 'dispatched', 'running', 'waiting', 'cancelling')";
/** The newest report of turn `tu`. */
const NEWEST = "(SELECT metadata FROM journal WHERE turn_id = tu.turn_id AND kind = 'token_usage' ORDER BY journal_id DESC LIMIT 1)";

function figures(metadata: string | null): TokenFigures | null {
  if (metadata === null) return null;
  try {
    return figuresFromMetadata(JSON.parse(metadata) as Record<string, never>);
  } catch {
    return null;
  }
}

/** The UsageReader over a store handle. */
export function usageStore(handle: Pick<StoreHandle, "db">): UsageReader {
  const { db } = handle;
  const newest = db.prepare("SELECT metadata FROM journal WHERE turn_id = ? AND kind = 'token_usage' ORDER BY journal_id DESC LIMIT 1");
  const byOwner = db.prepare(`SELECT ${NEWEST} AS usage FROM turns tu JOIN threads th ON th.thread_id = tu.thread_id
    WHERE th.principal = ? AND th.application = ? AND tu.created_at >= ?`);
  const byThread = db.prepare(`SELECT ${NEWEST} AS usage FROM turns tu JOIN threads th ON th.thread_id = tu.thread_id
    WHERE th.principal = ? AND th.application = ? AND tu.thread_id = ? AND tu.created_at >= ?`);
  const byApplication = db.prepare(`SELECT th.application AS application, ${NEWEST} AS usage FROM turns tu JOIN threads th ON th.thread_id = tu.thread_id
    WHERE tu.created_at >= ? ORDER BY th.application`);
  const active = db.prepare(`SELECT count(*) AS n FROM turns tu JOIN threads th ON th.thread_id = tu.thread_id WHERE th.application = ? AND tu.state IN ${ACTIVE}`);
  const times = db.prepare(`SELECT tu.created_at AS at FROM turns tu JOIN threads th ON th.thread_id = tu.thread_id
    WHERE th.application = ? AND tu.created_at >= ? ORDER BY tu.created_at`);
  const tokenTimes = db.prepare(`SELECT tu.created_at AS at, ${NEWEST} AS usage FROM turns tu JOIN threads th ON th.thread_id = tu.thread_id
    WHERE th.application = ? AND tu.created_at >= ? ORDER BY tu.created_at`);
  const usages = (rows: Row[]) => rows.map((r) => figures(textOrNull(r, "usage")));
  return {
    turnUsage(turnId) {
      const row = newest.get(turnId) as Row | undefined;
      return figures(row === undefined ? null : textOrNull(row, "metadata")) ?? "unreported";
    },
    totals(owner, threadId, since) {
      const rows = threadId === null ? byOwner.all(owner.principal, owner.application, since) : byThread.all(owner.principal, owner.application, threadId, since);
      return sumUsage(usages(rows as Row[]));
    },
    perApplication(since) {
      const grouped = new Map<string, (TokenFigures | null)[]>();
      for (const r of byApplication.all(since) as Row[]) {
        const app = text(r, "application");
        const list = grouped.get(app) ?? [];
        list.push(figures(textOrNull(r, "usage")));
        grouped.set(app, list);
      }
      return [...grouped].map(([application, list]) => ({ application, totals: sumUsage(list) }));
    },
    activeTurns: (application) => int(active.get(application) as Row, "n"),
    turnTimes: (application, since) => (times.all(application, since) as Row[]).map((r) => int(r, "at")),
    tokenTimes: (application, since) => (tokenTimes.all(application, since) as Row[]).map((r) => ({ at: int(r, "at"), tokens: figures(textOrNull(r, "usage"))?.totalTokens ?? 0 })),
  };
}

/** Totals per application read through a read-only connection (the CLI; a running service may hold the lock). */
export function readUsageByApplication(path: string, since: number): Result<readonly { application: string; totals: ReturnType<UsageReader["totals"]> }[]> {
  if (!isAbsolute(path)) return err(controllerError("config_invalid", { where: "database" }));
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(path, { readOnly: true, timeout: 1_000 });
    return ok(usageStore({ db }).perApplication(since));
  } catch {
    return err(controllerError("storage_unavailable"));
  } finally {
    if (db?.isOpen) db.close();
  }
}
