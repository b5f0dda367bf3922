// threads.list, threads.delete and usage.get, joined to the dispatch table by
// service.ts. Every read is scoped like the others: the session's principal
// and application (and its workspace and provider grants) pick the rows, so
// another application's threads are absent, never refused by name.
import { hasOwnerAuthority } from "../auth/access.ts";
import { ok } from "../domain/errors.ts";
import type { ParamsOf } from "../domain/contract/methods.ts";
import { THREAD_LIST_LIMITS } from "../domain/contract/methods-lifecycle.ts";
import { firstWords } from "../domain/first-words.ts";
import { fail } from "../domain/protocol-ports.ts";
import { decodeCursor, deleteThread, encodeCursor, type LifecyclePorts } from "../domain/thread-lifecycle.ts";
import type { Handler } from "./context.ts";
import { commandReply } from "./idempotent.ts";
import { loadThread } from "./methods-threads.ts";

const FIRST_WORDS_DEFAULT = 48;

/** The lifecycle part of the dispatch table. */
export function lifecycleMethods(ports: LifecyclePorts): Readonly<Record<string, Handler>> {
  const list: Handler = (_deps, _conn, access, raw) => {
    const p = raw as ParamsOf<"threads.list">;
    const after = p.cursor === undefined ? undefined : decodeCursor(p.cursor);
    if (p.cursor !== undefined && after === undefined) return fail("invalid_params");
    const limit = Math.min(p.limit ?? THREAD_LIST_LIMITS.default, THREAD_LIST_LIMITS.max);
    const rows = ports.store.list({
      principal: access.principal, application: access.application, workspaces: access.workspaces, providers: access.providers,
      state: p.state, activeSince: p.activeSince, activeBefore: p.activeBefore, threadIds: p.threadIds, after, limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    const max = p.firstWordsMax ?? FIRST_WORDS_DEFAULT;
    return ok({
      result: {
        threads: page.map(({ firstPrompt, ...row }) => ({ ...row, firstWords: firstPrompt === null ? null : firstWords(firstPrompt, max) })),
        nextCursor: rows.length > limit && last !== undefined ? encodeCursor({ at: last.lastActivityAt, threadId: last.threadId }) : null,
      },
    });
  };

  const remove: Handler = async (deps, conn, access, raw) => {
    const { commandId, threadId, cancelActive = false } = raw as ParamsOf<"threads.delete">;
    // The operator (owner authority) deletes any principal's thread; for others another's thread reads as absent.
    const any = hasOwnerAuthority(access) ? deps.store.threads.get(threadId) : undefined;
    const loaded = any === undefined ? loadThread(deps, access, threadId) : ok(any);
    if (!loaded.ok && loaded.error.code !== "not_found") return loaded;
    const owner = loaded.ok ? { principal: loaded.value.principal, application: loaded.value.application } : undefined;
    const accepted = await deleteThread(ports.deletion, ports.guard, access, { commandId, threadId, cancelActive, owner }, loaded.ok);
    if (accepted.ok && accepted.value.created) {
      conn.attachments.delete(threadId);
      deps.log("thread.deleted", { agentFiles: String(accepted.value.record.receipt.agentFiles ?? "none") });
    }
    return commandReply(deps, "threads.delete", accepted);
  };

  const usage: Handler = (deps, _conn, access, raw) => {
    const { threadId, since = 0 } = raw as ParamsOf<"usage.get">;
    if (threadId !== undefined) {
      const loaded = loadThread(deps, access, threadId);
      if (!loaded.ok) return loaded;
    }
    const totals = ports.usage.totals(access, threadId ?? null, since);
    return ok({ result: { scope: threadId === undefined ? "application" : "thread", threadId: threadId ?? null, application: access.application, totals } });
  };

  return { "threads.list": list, "threads.delete": remove, "usage.get": usage };
}
