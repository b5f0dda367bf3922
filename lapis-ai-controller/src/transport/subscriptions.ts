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
import type { ParamsOf } from "../domain/contract/methods.ts";

const BATCH = 256;

/** Ends a subscription and tells the client why (`overflow`, `unauthorized`, `unavailable`). */
export function closeSubscription(conn: Conn, sub: Subscription, reason: string): void {
  sub.stop();
  conn.subscriptions.delete(sub.id);
  conn.send(encodeNotification("subscription.closed", { subscriptionId: sub.id, threadId: sub.threadId, reason }));
}

/**
 * One replay page per (thread, cursor) for the subscribers pumped in the same
 * round: a journal append wakes every subscriber of the thread, and they
 * usually stand at the same cursor, so the page is read and each event is
 * encoded once, not once per subscriber. The memo lives until the current
 * microtask queue drains, so no page outlives the round (a volatile payload
 * lost later is never served from it).
 */
const roundPages = new Map<string, { events: readonly ReplayEvent[]; json: Map<number, string> }>();

function sharedPage(deps: ProtocolDeps, threadId: string, cursor: number): { events: readonly ReplayEvent[]; json: Map<number, string> } {
  const key = `${threadId}\u0000${cursor}`;
  let page = roundPages.get(key);
  if (page === undefined) {
    if (roundPages.size === 0) queueMicrotask(() => roundPages.clear());
    page = committedPage(deps, threadId, cursor) ?? { events: deps.store.journal.replay(threadId, cursor, BATCH).events, json: new Map() };
    roundPages.set(key, page);
  }
  return page;
}

/**
 * The page from the thread's committed tail instead of reading back the rows
 * just written (P-PRF-18), when the tail holds the row after the cursor and
 * its last row is the thread's last: a row another path wrote, or one the
 * tail dropped, sends the pump to the journal as before.
 */
function committedPage(deps: ProtocolDeps, threadId: string, cursor: number): { events: readonly ReplayEvent[]; json: Map<number, string> } | null {
  const tail = deps.hub.tail.page(threadId, cursor);
  const last = tail === null || tail.length > BATCH ? undefined : tail[tail.length - 1];
  if (tail === null || last === undefined || deps.store.journal.lastSeq(threadId) !== last.event.seq) return null;
  // Sent to this round's subscribers (the round's memo serves the others at this cursor); a subscriber behind reads the journal.
  deps.hub.tail.drop(threadId, last.event.seq);
  return { events: tail.map((t) => t.event), json: new Map(tail.map((t) => [t.event.seq, t.json])) };
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
  // A deleted thread ends its subscriptions (threads.delete wakes them).
  if (deps.store.threads.get(sub.threadId) === undefined) {
    closeSubscription(conn, sub, "unavailable");
    return;
  }
  for (;;) {
    if (conn.bufferedAmount() > deps.limits.maxBufferedBytes) {
      closeSubscription(conn, sub, "overflow");
      return;
    }
    // Lost volatile payloads arrive as `payloadUnavailable` markers, never dropped (P-STO-17).
    const page = sharedPage(deps, sub.threadId, sub.cursor);
    // One write for the page's frames (P-PRF-12); the buffered amount is checked again before the next page.
    const frames: string[] = [];
    for (const event of page.events) eventFrame(frames, sub, event, page.json);
    conn.sendAll(frames);
    if (page.events.length < BATCH) return;
  }
}

function eventFrame(frames: string[], sub: Subscription, event: ReplayEvent, encoded: Map<number, string>): void {
  if (event.seq <= sub.cursor) return;
  sub.cursor = event.seq;
  let json = encoded.get(event.seq);
  if (json === undefined) { json = JSON.stringify(event); encoded.set(event.seq, json); }
  // Byte-for-byte what encodeNotification("event", {subscriptionId, threadId, seq, event}) writes.
  frames.push(`{"jsonrpc":"2.0","method":"event","params":{"subscriptionId":${JSON.stringify(sub.id)},"threadId":${JSON.stringify(sub.threadId)},"seq":${event.seq},"event":${json}}}`);
}

const subscribe: Handler = (deps, conn, access, raw) => {
  const { threadId, afterSeq } = raw as ParamsOf<"threads.subscribe">;
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
  const unwatch = deps.hub.tail.watch(threadId);
  sub.stop = () => { unlisten(); unwatch(); };
  return ok({
    result: { subscriptionId: sub.id, threadId, cursor: sub.cursor, lastSeq },
    after: () => pump(deps, conn, sub),
  });
};

const unsubscribe: Handler = (_deps, conn, _access, raw) => {
  const { subscriptionId: id } = raw as ParamsOf<"threads.unsubscribe">;
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
