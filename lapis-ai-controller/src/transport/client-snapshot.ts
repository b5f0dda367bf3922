// Snapshots for clients: thread state plus a bounded activity tail with an
// explicit truncation flag; the complete history stays in replay (P-SDK-03).
import { ok } from "../domain/errors.ts";
import type { JournalStore, ReplayEvent } from "../domain/ports.ts";
import type { Outcome, ThreadBinding } from "../domain/protocol-ports.ts";
import { bindingOf } from "../domain/protocol-ports.ts";
import type { Json, ThreadRecord } from "../domain/records.ts";

/** The snapshot a client receives. `lastSeq` is where a subscription continues. */
export interface ThreadSnapshot {
  readonly threadId: string;
  readonly application: string;
  readonly workspaceId: string;
  readonly provider: string;
  readonly binding: ThreadBinding;
  readonly config: { readonly [key: string]: Json };
  readonly configVersion: number;
  readonly busy: boolean;
  readonly lastSeq: number;
  /** The newest events, oldest first; lost volatile payloads carry `payloadUnavailable`. */
  readonly tail: readonly ReplayEvent[];
  /** True when events before the tail exist and were left out. */
  readonly truncated: boolean;
}

/** Builds a snapshot with at most `tailLimit` newest events. */
export function buildSnapshot(thread: ThreadRecord, journal: JournalStore, tailLimit: number, busy: boolean): ThreadSnapshot {
  const lastSeq = journal.lastSeq(thread.threadId);
  const tail = journal.replay(thread.threadId, Math.max(0, lastSeq - tailLimit), tailLimit).events;
  const first = tail.length > 0 ? (tail[0] as ReplayEvent).seq : lastSeq + 1;
  return {
    threadId: thread.threadId,
    application: thread.application,
    workspaceId: thread.workspaceId,
    provider: thread.provider,
    binding: bindingOf(thread),
    config: thread.config,
    configVersion: thread.configVersion,
    busy,
    lastSeq,
    tail,
    truncated: first > 1,
  };
}

/**
 * One replay page: events after `afterSeq`; `complete` when it reaches
 * `lastSeq` with every payload present. A lost volatile payload marks its own
 * event (`payloadUnavailable`) and the page reports `transcript_unavailable`
 * in `unavailable` (P-STO-15) instead of failing as a whole.
 */
export interface ReplayPage {
  readonly threadId: string;
  readonly events: readonly ReplayEvent[];
  readonly lastSeq: number;
  readonly complete: boolean;
  /** Present when a payload of this page is gone. */
  readonly unavailable?: "transcript_unavailable";
}

/** Reads one replay page of at most `limit` events, in SQL (cursor + LIMIT). */
export function replayPage(thread: ThreadRecord, journal: JournalStore, afterSeq: number, limit: number): Outcome<ReplayPage> {
  const lastSeq = journal.lastSeq(thread.threadId);
  const replay = journal.replay(thread.threadId, afterSeq, limit);
  const events = replay.events;
  const reached = events.length > 0 ? (events[events.length - 1] as ReplayEvent).seq : afterSeq;
  const page = { threadId: thread.threadId, events, lastSeq, complete: replay.complete && reached >= lastSeq };
  return ok(replay.unavailable === null ? page : { ...page, unavailable: "transcript_unavailable" });
}
