// The controller side of a consumer transcript store (issue 31 point 4). Before
// a turn is dispatched, and before an application tool call is sent, every
// committed transcript entry of the thread that its owner's store does not yet
// hold is appended in contiguous batches, all under one capped deadline
// (default 120 s). The store answers `{lastSeq}`; anything else, a late
// answer, a revoked or disconnected store fails closed with a stable code, so
// an append that did not land never authorizes a provider or tool step. A
// cancelled turn is never dispatched whatever the append did (the dispatch
// boundary checks the turn is still preparing). The controller sends entries
// only; keys and ciphertext stay in the application.
import type { EndpointOwner } from "../domain/endpoint-registration.ts";
import type { ErrorCode } from "../domain/errors.ts";
import type { PreparationPort } from "../domain/turn-preparation.ts";
import { assertTranscript, type TranscriptEvent } from "../domain/transcript-rule.ts";
import { TRANSCRIPT_STORE_CAPS, TRANSCRIPT_STORE_DEFAULTS, type TranscriptStoreLimits } from "../domain/transcript-store.ts";
import type { JournalStore } from "../domain/ports.ts";
import type { RegistryRef } from "./capture-port.ts";
import { withDeadline } from "./context-port.ts";

/** Committed transcript entries of a thread after `afterSeq`, at most `limit`, oldest first. */
export type CommittedEntries = (threadId: string, afterSeq: number, limit: number) => readonly TranscriptEvent[];

/** The outcome of bringing a thread's store up to date. */
export type AppendOutcome = { readonly ok: true } | { readonly ok: false; readonly code: ErrorCode };

/**
 * Brings the owner's store of a thread up to its committed seq; settles by the
 * deadline. `beforeRead` runs once before the first committed entry is read,
 * only when the thread has a store to bring up (the turn's end uses it to
 * commit the queued events then, and not at all without a store); if it
 * throws, the append fails `storage_write_failed`.
 */
export type TranscriptAppender = (threadId: string, beforeRead?: () => void) => Promise<AppendOutcome>;

const PASSED_THROUGH: readonly ErrorCode[] = ["endpoint_timeout", "endpoint_revoked", "endpoint_disconnected", "endpoint_not_found"];

function capped(value: number | undefined, fallback: number, cap: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0) throw new Error("invalid transcript store limit");
  return Math.min(value, cap);
}

function ackedSeq(value: unknown): number | null {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const keys = Object.keys(value);
  const seq = (value as { lastSeq?: unknown }).lastSeq;
  return keys.length === 1 && typeof seq === "number" && Number.isSafeInteger(seq) && seq >= 0 ? seq : null;
}

/** Per thread: the seq its store acknowledged and the store that did (null: none served it yet). */
export interface Cursor {
  acked: number;
  endpointId: string | null;
}

/**
 * Where append progress survives a restart: `load` reads a thread's last
 * acknowledged cursor, `save` records one durably (false: it could not be
 * written, and the append fails closed `storage_write_failed`). Without it,
 * progress lives in memory only.
 */
export type AppendProgress = {
  load(threadId: string): Cursor | null;
  save(threadId: string, cursor: Readonly<Cursor>): boolean;
};

/** Builds the appender; `owner` reads the stored thread, limits come from config and are capped here. */
export function transcriptAppender(
  registry: RegistryRef,
  owner: (threadId: string) => EndpointOwner | null,
  committed: CommittedEntries,
  limits: Partial<TranscriptStoreLimits> = {},
  progress?: AppendProgress,
): TranscriptAppender {
  const deadlineMs = capped(limits.transcriptDeadlineMs, TRANSCRIPT_STORE_DEFAULTS.transcriptDeadlineMs, TRANSCRIPT_STORE_CAPS.transcriptDeadlineMs);
  const batchMax = capped(limits.transcriptBatchMax, TRANSCRIPT_STORE_DEFAULTS.transcriptBatchMax, TRANSCRIPT_STORE_CAPS.transcriptBatchMax);
  const cursors = new Map<string, Cursor>();
  const running = new Map<string, Promise<AppendOutcome>>();

  const bringUp = async (threadId: string, beforeRead: () => void): Promise<AppendOutcome> => {
    const who = owner(threadId);
    if (who === null) return { ok: false, code: "not_found" };
    const reg = registry();
    // After a restart the recorded progress says what the store already holds: no gap, nothing sent twice.
    const cursor = cursors.get(threadId) ?? progress?.load(threadId) ?? { acked: 0, endpointId: null };
    const deadlineAt = Date.now() + deadlineMs;
    let endpoint = reg?.findTranscript(who, threadId);
    // A store that served this thread and is gone (reconnect, restart of the
    // application) gets until the deadline to come back; without it nothing runs.
    if (endpoint === undefined && cursor.endpointId !== null) endpoint = await reg?.whenRegistered(who, cursor.endpointId, deadlineMs);
    if (endpoint === undefined && cursor.endpointId === null) {
      // No store serves this thread: kept, so the next turn does not read the recorded progress again.
      cursors.set(threadId, cursor);
      return { ok: true };
    }
    if (endpoint === undefined) return { ok: false, code: "endpoint_disconnected" };
    if (reg === null || reg === undefined) return { ok: false, code: "endpoint_disconnected" };
    // Another store than the one that acknowledged: it starts from the beginning (seq is its idempotency key).
    if (endpoint.endpointId !== cursor.endpointId) cursor.acked = 0;
    cursor.endpointId = endpoint.endpointId;
    cursors.set(threadId, cursor);
    try { beforeRead(); } catch { return { ok: false, code: "storage_write_failed" }; }
    for (;;) {
      const events = committed(threadId, cursor.acked, batchMax);
      const last = events[events.length - 1];
      if (last === undefined) return { ok: true };
      const transcript = { threadId, events };
      // Our own history breaking the public rule is a bug, not an expected failure.
      assertTranscript(transcript);
      const remaining = deadlineAt - Date.now();
      if (remaining <= 0) return { ok: false, code: "endpoint_timeout" };
      const answer = await withDeadline(reg.invoke(who, endpoint.endpointId, "transcript.append", { threadId, transcript }, remaining), remaining);
      if (!answer.ok) return { ok: false, code: PASSED_THROUGH.includes(answer.error.code) ? answer.error.code : "transcript_append_failed" };
      const acked = ackedSeq(answer.value);
      // Exactly the batch's last seq: less is a lost entry, more claims entries never sent (a wrong answer either way).
      if (acked !== last.seq) return { ok: false, code: "transcript_append_failed" };
      cursor.acked = last.seq;
      if (progress !== undefined && !progress.save(threadId, cursor)) return { ok: false, code: "storage_write_failed" };
    }
  };

  // One bring-up per thread at a time; a caller arriving meanwhile waits for it and then checks again.
  return async (threadId, beforeRead = () => {}) => {
    for (;;) {
      const current = running.get(threadId);
      if (current === undefined) break;
      await current;
    }
    const run = bringUp(threadId, beforeRead).finally(() => running.delete(threadId));
    running.set(threadId, run);
    return run;
  };
}

/** The preparation port with the thread's store brought up to date first: a failed append fails the turn before dispatch. */
export function withTranscriptAppend(prepare: PreparationPort, append: TranscriptAppender): PreparationPort {
  return async (request) => {
    const appended = await append(request.threadId);
    if (!appended.ok) return { ok: false, code: appended.code };
    return prepare(request);
  };
}

/** The owner-journal row kind that records a thread's append progress (metadata only: endpoint id and seq). */
export const TRANSCRIPT_STORED_KIND = "transcript_stored";

/** Append progress as owner rows of the thread's journal (no seq, not part of the transcript, so never appended itself). */
export function journalAppendProgress(journal: Pick<JournalStore, "append" | "lastThreadFact">): AppendProgress {
  return {
    load(threadId) {
      const fact = journal.lastThreadFact(threadId, TRANSCRIPT_STORED_KIND);
      const acked = fact?.lastSeq;
      const endpointId = fact?.endpointId;
      return typeof acked === "number" && Number.isSafeInteger(acked) && acked >= 0 && typeof endpointId === "string" ? { acked, endpointId } : null;
    },
    save(threadId, cursor) {
      if (cursor.endpointId === null) return true;
      return journal.append({ threadId, turnId: null, visibility: "owner", kind: TRANSCRIPT_STORED_KIND, metadata: { endpointId: cursor.endpointId, lastSeq: cursor.acked }, createdAt: Date.now() }).ok;
    },
  };
}
