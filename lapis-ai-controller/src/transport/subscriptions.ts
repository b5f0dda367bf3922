// threads.subscribe: `event` notifications carrying threadId and the
// per-thread seq, read from the journal by cursor so there is no gap and no
// duplicate; a slow reader is dropped with `subscription.closed` and resumes
// from its own cursor.
import { ok } from "../domain/errors.ts";
import type { ReplayEvent } from "../domain/ports.ts";
import { fail } from "../domain/protocol-ports.ts";
import type { Conn, Handler, ProtocolDeps, Subscription } from "./context.ts";
import { encodeNotification } from "./frames.ts";
import { loadThread } from "./methods-threads.ts";
import { Params } from "./params.ts";

const BATCH = 256;

/** Ends a subscription and tells the client why (`overflow`, `unauthorized`, `unavailable`). */
export function closeSubscription(conn: Conn, sub: Subscription, reason: string): void {
  sub.stop();
  conn.subscriptions.delete(sub.id);
  conn.send(encodeNotification("subscription.closed", { subscriptionId: sub.id, threadId: sub.threadId, reason }));
}

/** Sends every journal event after the cursor, in order. */
export function pump(deps: ProtocolDeps, conn: Conn, sub: Subscription): void {
  if (!conn.subscriptions.has(sub.id)) return;
  const access = conn.access;
  // A revoked or expired session stops receiving at once.
  if (access === null || !deps.auth.validate(access.authSessionId).ok) {
    closeSubscription(conn, sub, "unauthorized");
    return;
  }
  for (;;) {
    if (conn.bufferedAmount() > deps.limits.maxBufferedBytes) {
      closeSubscription(conn, sub, "overflow");
      return;
    }
    // Lost volatile payloads arrive as `payloadUnavailable` markers, never dropped (P-STO-17).
    const batch = deps.store.journal.replay(sub.threadId, sub.cursor, BATCH).events;
    for (const event of batch) sendEvent(conn, sub, event);
    if (batch.length < BATCH) return;
  }
}

function sendEvent(conn: Conn, sub: Subscription, event: ReplayEvent): void {
  if (event.seq <= sub.cursor) return;
  sub.cursor = event.seq;
  conn.send(encodeNotification("event", { subscriptionId: sub.id, threadId: sub.threadId, seq: event.seq, event }));
}

const subscribe: Handler = (deps, conn, access, raw) => {
  const p = new Params(raw, ["threadId", "afterSeq"]);
  const threadId = p.id("threadId");
  const afterSeq = p.optionalInt("afterSeq", 0, Number.MAX_SAFE_INTEGER);
  const loaded = loadThread(deps, access, threadId);
  if (!loaded.ok) return loaded;
  if (conn.subscriptions.size >= deps.limits.maxSubscriptionsPerConnection) return fail("subscription_limit");
  const lastSeq = deps.store.journal.lastSeq(threadId);
  const sub: Subscription = { id: deps.newId(), threadId, cursor: Math.min(afterSeq ?? lastSeq, lastSeq), stop: () => {} };
  conn.subscriptions.set(sub.id, sub);
  let scheduled = false;
  const unlisten = deps.hub.listen(threadId, () => {
    if (scheduled) return;
    scheduled = true;
    queueMicrotask(() => {
      scheduled = false;
      pump(deps, conn, sub);
    });
  });
  sub.stop = unlisten;
  return ok({
    result: { subscriptionId: sub.id, threadId, cursor: sub.cursor, lastSeq },
    after: () => pump(deps, conn, sub),
  });
};

const unsubscribe: Handler = (_deps, conn, _access, raw) => {
  const p = new Params(raw, ["subscriptionId"]);
  const id = p.id("subscriptionId");
  const sub = conn.subscriptions.get(id);
  if (sub === undefined) return fail("not_found");
  sub.stop();
  conn.subscriptions.delete(id);
  return ok({ result: { subscriptionId: id } });
};

/** Stops all subscriptions of a closing connection. */
export function stopAll(conn: Conn): void {
  for (const sub of conn.subscriptions.values()) sub.stop();
  conn.subscriptions.clear();
}

/** The subscription part of the dispatch table. */
export const SUBSCRIPTION_METHODS: Readonly<Record<string, Handler>> = {
  "threads.subscribe": subscribe,
  "threads.unsubscribe": unsubscribe,
};
