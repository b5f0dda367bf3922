// History-control methods joined to the dispatch table: threads.fork,
// threads.rollback, threads.compact and turns.steer (P-HIS). Every call first
// loads the thread (or the turn's thread) under the caller's principal and
// application, so another application's thread reads as not_found; the rules
// are domain/history-commands.ts.
import { compactThread, forkThread, rollbackThread, steerTurn, type HistoryDeps } from "../domain/history-commands.ts";
import { fail } from "../domain/protocol-ports.ts";
import type { ParamsOf } from "../domain/contract/methods.ts";
import type { Handler } from "./context.ts";
import { commandReply } from "./idempotent.ts";
import { loadThread, threadDeps } from "./methods-threads.ts";

/** The history handlers over the engine's store, capabilities and steer. */
export function historyMethods(h: HistoryDeps): Readonly<Record<string, Handler>> {
  const fork: Handler = (deps, conn, access, raw) => {
    const { commandId, threadId, afterTurnId } = raw as ParamsOf<"threads.fork">;
    const loaded = loadThread(deps, access, threadId);
    if (!loaded.ok) return loaded;
    const accepted = forkThread(threadDeps(deps), h, access, loaded.value, { commandId, afterTurnId });
    if (accepted.ok) conn.attachments.set(String(accepted.value.record.receipt.threadId), "attached");
    return commandReply(deps, "threads.fork", accepted);
  };

  const rollback: Handler = (deps, _conn, access, raw) => {
    const { commandId, threadId, turns } = raw as ParamsOf<"threads.rollback">;
    const loaded = loadThread(deps, access, threadId);
    if (!loaded.ok) return loaded;
    return commandReply(deps, "threads.rollback", rollbackThread(threadDeps(deps), h, access, loaded.value, { commandId, turns }));
  };

  const compact: Handler = (deps, _conn, access, raw) => {
    const { commandId, threadId } = raw as ParamsOf<"threads.compact">;
    const loaded = loadThread(deps, access, threadId);
    if (!loaded.ok) return loaded;
    return commandReply(deps, "threads.compact", compactThread(threadDeps(deps), h, access, loaded.value, commandId));
  };

  const steer: Handler = (deps, _conn, access, raw) => {
    const { commandId, turnId, input } = raw as ParamsOf<"turns.steer">;
    const turn = h.engine.getTurn(turnId);
    if (turn === null) return fail("not_found");
    const loaded = loadThread(deps, access, turn.threadId);
    if (!loaded.ok) return loaded;
    return commandReply(deps, "turns.steer", steerTurn(threadDeps(deps), h, access, loaded.value, { commandId, turnId, input }));
  };

  return { "threads.fork": fork, "threads.rollback": rollback, "threads.compact": compact, "turns.steer": steer };
}
