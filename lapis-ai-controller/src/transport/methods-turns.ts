// Engine methods joined to the dispatch table: turns.continue, turns.cancel,
// turns.resolve, turns.get, turns.wait and interactions.respond. Every call first loads
// the turn's thread under the caller's principal and application, so another
// principal's turn reads as not_found (P-TRN-24). Params arrive validated
// against the contract (dispatch.ts) and are read typed as ParamsOf<method>.
import { ok } from "../domain/errors.ts";
import type { AccessContext, Outcome } from "../domain/protocol-ports.ts";
import { fail } from "../domain/protocol-ports.ts";
import type { TurnRecord } from "../domain/turn-store-port.ts";
import type { TurnService } from "../domain/turn-service.ts";
import { hasOwnerAuthority } from "../auth/access.ts";
import type { Conn, Handler, ProtocolDeps } from "./context.ts";
import { commandReply } from "./idempotent.ts";
import { loadThread } from "./methods-threads.ts";
import { WAIT_HOLD_MAX_MS, type ParamsOf } from "../domain/contract/methods.ts";
import { SETTLED_TURN_STATES } from "../domain/contract/sdk-types.ts";

function loadTurn(deps: ProtocolDeps, service: TurnService, access: AccessContext, turnId: string): Outcome<{ threadId: string; turn: TurnRecord }> {
  const turn = service.store.getTurn(turnId);
  if (!turn) return fail("not_found");
  const thread = loadThread(deps, access, turn.threadId);
  return thread.ok ? ok({ threadId: turn.threadId, turn }) : thread;
}

/**
 * Resolves once `settled()` reads true, `ms` passed or the connection closed.
 * It reads after each journal commit of the thread, in a microtask: the
 * writing transaction is synchronous and has committed by then, so what it
 * reads is durable (never a state inside an open transaction). A held wait
 * counts as one of the connection's subscriptions (the same bound; a closing
 * connection ends it); false when that bound is reached.
 */
function whenSettled(deps: ProtocolDeps, conn: Conn, threadId: string, settled: () => boolean, ms: number): Promise<boolean> {
  if (settled()) return Promise.resolve(true);
  if (conn.subscriptions.size >= deps.limits.maxSubscriptionsPerConnection) return Promise.resolve(false);
  return new Promise((resolve) => {
    let queued = false;
    const id = `wait:${deps.newId()}`;
    const done = (): void => { clearTimeout(timer); unlisten(); conn.subscriptions.delete(id); resolve(true); };
    const timer = setTimeout(done, ms);
    const unlisten = deps.hub.listen(threadId, () => {
      if (queued) return;
      queued = true;
      queueMicrotask(() => { queued = false; if (settled()) done(); });
    });
    conn.subscriptions.set(id, { id, threadId, cursor: 0, stop: done });
  });
}

/** The engine's handlers over one TurnService. */
export function turnMethods(service: TurnService, gate?: (thread: { threadId: string; application: string }) => Outcome<void>): Readonly<Record<string, Handler>> {
  const continueTurn: Handler = (deps, _conn, access, raw) => {
    const { commandId, turnId, input } = raw as ParamsOf<"turns.continue">;
    const loaded = loadTurn(deps, service, access, turnId);
    if (!loaded.ok) return loaded;
    // Quotas and a deletion in progress refuse a new attempt; a repeated command answers its receipt as always.
    if (gate !== undefined && deps.store.commands.get(access.principal, access.application, commandId) === undefined) {
      const open = gate({ threadId: loaded.value.threadId, application: access.application });
      if (!open.ok) return open;
    }
    return commandReply(deps, "turns.continue", service.continue(deps, access, { commandId, turnId, input }));
  };

  const cancel: Handler = (deps, _conn, access, raw) => {
    const { commandId, turnId } = raw as ParamsOf<"turns.cancel">;
    const loaded = loadTurn(deps, service, access, turnId);
    if (!loaded.ok) return loaded;
    return commandReply(deps, "turns.cancel", service.cancelCommand(deps, access, { commandId, turnId }));
  };

  const resolve: Handler = (deps, _conn, access, raw) => {
    const { commandId, turnId, as, confirmExternalStopped = false } = raw as ParamsOf<"turns.resolve">;
    // The operator resolves any principal's lost turn on a running service (owner authority, audited as owner/owner).
    const loaded = hasOwnerAuthority(access) ? (service.store.getTurn(turnId) === undefined ? fail("not_found") : ok(undefined)) : loadTurn(deps, service, access, turnId);
    if (!loaded.ok) return loaded;
    return commandReply(deps, "turns.resolve", service.resolveCommand(deps, access, { commandId, turnId, as, confirmExternalStopped }));
  };

  const get: Handler = (deps, _conn, access, raw) => {
    const { turnId } = raw as ParamsOf<"turns.get">;
    const loaded = loadTurn(deps, service, access, turnId);
    if (!loaded.ok) return loaded;
    // The turn as loadTurn read it, in the same synchronous step: not read again (P-PRF-15).
    const view = service.viewOf(loaded.value.turn);
    const interactions = service.interactions(turnId).map((i) => ({
      interactionId: i.id, nativeRequestId: i.nativeRequestId, category: i.category, state: i.state,
      optionIds: i.optionIds, optionId: i.optionId, decidedBy: i.decidedBy, deadlineAt: i.deadlineAt,
    }));
    return ok({ result: { ...view, interactions, memory: service.memory(turnId), usage: service.usage(turnId) } });
  };

  // Held until the turn is settled (or the deadline): one request instead of a subscription plus a read after the outcome event.
  const wait: Handler = async (deps, conn, access, raw) => {
    const { turnId, timeoutMs = WAIT_HOLD_MAX_MS } = raw as ParamsOf<"turns.wait">;
    const loaded = loadTurn(deps, service, access, turnId);
    if (!loaded.ok) return loaded;
    const held = await whenSettled(deps, conn, loaded.value.threadId, () => {
      const turn = service.store.getTurn(turnId);
      return turn === null || (SETTLED_TURN_STATES as readonly string[]).includes(turn.state);
    }, Math.min(timeoutMs, WAIT_HOLD_MAX_MS));
    if (!held) return fail("subscription_limit");
    return get(deps, conn, access, { turnId });
  };

  const respond: Handler = (deps, _conn, access, raw) => {
    // The contract's oneOf: exactly one of optionId and outcome "cancelled".
    const params = raw as ParamsOf<"interactions.respond">;
    const { commandId, turnId, interactionId } = params;
    const loaded = loadTurn(deps, service, access, turnId);
    if (!loaded.ok) return loaded;
    const answer = "optionId" in params ? { optionId: params.optionId } : { outcome: "cancelled" as const };
    return commandReply(deps, "interactions.respond", service.respondCommand(deps, access, { commandId, turnId, interactionId, answer }));
  };

  return {
    "turns.continue": continueTurn,
    "turns.cancel": cancel,
    "turns.resolve": resolve,
    "turns.get": get,
    "turns.wait": wait,
    "interactions.respond": respond,
  };
}
