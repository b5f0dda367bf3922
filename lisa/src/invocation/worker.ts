import { errorCode, LisaError, type Result } from "../errors.ts";
import { invocationHash, roomHash } from "../log/hash.ts";
import type { Logger } from "../log/logger.ts";
import { MATRIX_CODES } from "../matrix/codes.ts";
import type { MatrixError } from "../matrix/errors.ts";
import type { RawEvent, RoomWritePort } from "../matrix/port.ts";
import type { StateStore } from "../state/store.ts";
import type { InvocationRow, WorkItem } from "../state/types.ts";
import { classifyCandidate, parseStoredEvent, type ClassifierSettings, type ReplyTargetCheck } from "./classify.ts";
import { sendBackoffMs } from "./backoff.ts";
import { OPEN_GATE, type RoomGateCheck } from "./room-gate.ts";
import { REPLY_MARKER_KEY, type SentReplyLookup } from "./sent-lookup.ts";
import { TypingLease } from "./typing.ts";
import type { AnswerProgress } from "../llm/types.ts";
import type { EditPolicy } from "./edit-scheduler.ts";
import { ReplyStream, type PartialView, type StatusTexts, type StreamStore } from "./reply-stream.ts";
import { sendFinalEdit } from "./stream-final.ts";
import { deadlineFor } from "./deadline.ts";

/** The ledger operations the worker needs. */
export type WorkerStore = Pick<
  StateStore,
  "markIgnored" | "discardReady" | "commitReady" | "markSent" | "recordSendFailure" | "releaseLease" | "roomCursor"
> & StreamStore;

/** A reply draft: Markdown plus host-validated sources. */
export interface ReplyDraft {
  readonly markdown: string;
  readonly sources: readonly { readonly url: string; readonly title: string | null }[];
  readonly llmIterations?: number;
  readonly toolCalls?: number;
}

/** Produces the answer to one accepted invocation (context, model, tools); `progress` streams it. */
export type Responder = (event: RawEvent, signal: AbortSignal, progress?: (progress: AnswerProgress) => void) => Promise<Result<ReplyDraft, LisaError>>;

/** Turns a draft or a fallback text into the exact Matrix content to persist (possibly after loading the renderer). */
export interface ContentRenderer {
  reply(draft: ReplyDraft, invoking: RawEvent): Record<string, unknown> | Promise<Record<string, unknown>>;
  fallback(text: string, invoking: RawEvent): Record<string, unknown> | Promise<Record<string, unknown>>;
  /** A streaming reply's partial content (required when streaming is on). */
  partial?(view: PartialView, invoking: RawEvent): Record<string, unknown> | Promise<Record<string, unknown>>;
}

/** Worker settings. */
export interface WorkerSettings extends ClassifierSettings {
  readonly invocationTimeoutMs: number;
  readonly genericError: string;
  readonly overloadError: string;
  /** Leases after which a candidate is answered with the fallback (and deferrals stop). */
  readonly maxAttempts: number;
}

// Codes that mean "too much at once" and get the persona's overload text.
const OVERLOAD_CODES = new Set(["invocation_limit", "llm_request_too_large"]);
// How long a single send may take before it is retried later.
const SEND_DEADLINE_MS = 60_000;
// Delay before a candidate whose classification could not complete is retried.
const CLASSIFY_RETRY_MS = 10_000;

/** Everything the worker needs, as narrow ports. */
export interface WorkerDeps {
  readonly store: WorkerStore;
  readonly room: RoomWritePort;
  readonly replyTarget: ReplyTargetCheck;
  /** Whether text mentions Lisa by one of the room's names now (aliases, user id, her display name there). */
  readonly matchesAlias: (roomId: string, text: string) => boolean;
  readonly respond: Responder;
  readonly render: ContentRenderer;
  /** Finds a reply already in the room (by its marker) before a resend under another token. */
  readonly sentLookup: SentReplyLookup;
  readonly settings: WorkerSettings;
  readonly log: Logger;
  readonly now?: () => number;
  /** The room's current condition (LISA-ROOMSTATE-01); every room is open without it. */
  readonly gate?: RoomGateCheck;
  /** Streaming replies' edit pace; streaming is off without it. */
  readonly streaming?: EditPolicy;
  /** Streaming replies' status lines (`persona.status_*`; the defaults without it). */
  readonly statusTexts?: StatusTexts;
}

/** Builds the handler that takes one leased work item to a durable state. */
export function createInvocationWorker(deps: WorkerDeps): (item: WorkItem, signal: AbortSignal, releasePermit?: () => void) => Promise<void> {
  const now = deps.now ?? Date.now;
  const tracking: SendTracking = { failures: new Map(), tokens: new Map() };
  const send = (row: InvocationRow, signal: AbortSignal, log: Logger, fresh: boolean): Promise<void> =>
    sendStored(deps, row, signal, log, now, tracking, fresh);
  return async (item, signal, releasePermit = () => undefined) => {
    const log = deps.log.child({ invocation_id: invocationHash(item.invocation.eventId), room_id_hash: roomHash(item.invocation.roomId) });
    if (item.kind === "send") {
      // A stored reply is already durable: resending it is not processing.
      releasePermit();
      await send(item.invocation, signal, log, false);
      return;
    }
    // Typing stays on until the reply is sent, so the reply reaches the room
    // one round trip sooner and the room never sees "not typing" before it.
    const typing = new TypingLease(item.invocation.roomId, deps.room, log);
    try {
      const ready = await processCandidate(deps, item.invocation, signal, log, now, typing);
      // The reply is durable (ready_to_send) or the candidate is decided: the
      // permit may serve another room while this one sends.
      releasePermit();
      if (ready !== null) await send(ready, signal, log, true);
    } finally {
      await typing.stop();
    }
  };
}

// Classifies and answers a leased candidate; returns the ready row to send, or null.
async function processCandidate(
  deps: WorkerDeps, row: InvocationRow, signal: AbortSignal, log: Logger, now: () => number, typing: TypingLease,
): Promise<InvocationRow | null> {
  const event = parseStoredEvent(row.rawEventJson);
  const baselineTsMs = deps.store.roomCursor(row.roomId)?.baselineTsMs ?? null;
  const verdict = await classifyCandidate(event, row.roomId, deps.settings, {
    matches: (text) => deps.matchesAlias(row.roomId, text), replyTarget: deps.replyTarget, baselineTsMs,
  }, signal);
  if (signal.aborted) {
    deps.store.releaseLease(row.eventId, "shutdown");
    return null;
  }
  if (!verdict.accepted) {
    if (verdict.retryable === true && row.attemptCount < deps.settings.maxAttempts) {
      deps.store.releaseLease(row.eventId, verdict.reason, now() + CLASSIFY_RETRY_MS);
      log.warn("invocation_deferred", { reason: verdict.reason, attempt: row.attemptCount });
      return null;
    }
    deps.store.markIgnored(row.eventId, verdict.reason);
    log.info("invocation_ignored", { reason: verdict.reason });
    return null;
  }
  // A room condition stops the invocation before anything reaches the LLM.
  const gate = deps.gate?.(row.roomId) ?? OPEN_GATE;
  if (gate.kind === "ignore") {
    deps.store.markIgnored(row.eventId, gate.code);
    log.info("invocation_ignored", { reason: gate.code });
    return null;
  }
  if (gate.kind === "hold") {
    deps.store.releaseLease(row.eventId, gate.code);
    log.info("invocation_held", { reason: gate.code });
    return null;
  }
  log.info("invocation_accepted", { reason: verdict.reason, attempt: row.attemptCount });
  const limit = deadlineFor(signal, deps.settings.invocationTimeoutMs);
  try {
    return await answerAccepted(deps, row, verdict.event, signal, limit.signal, log, now, typing);
  } finally {
    limit.clear();
  }
}

// Answers an accepted candidate within its deadline; returns the ready row to send, or null.
async function answerAccepted(
  deps: WorkerDeps, row: InvocationRow, event: RawEvent, signal: AbortSignal, deadline: AbortSignal, log: Logger, now: () => number, typing: TypingLease,
): Promise<InvocationRow | null> {
  const started = now();
  // Typing goes out alongside the context fetch; the lease's stop() waits for it.
  void typing.start(deadline);
  // A candidate leased this often keeps failing (crashes, kills): answer with
  // the fallback instead of looping forever.
  const stream = openStream(deps, row, event, deadline, log, now);
  const outcome = row.attemptCount > deps.settings.maxAttempts
    ? { ok: false as const, error: new LisaError("attempts_exhausted", "too many processing attempts") }
    : await respondSafely(deps.respond, event, deadline, log, stream?.progress);
  const streamed = await stream?.finish();
  if (signal.aborted) {
    // Shutdown, not failure: hand the invocation back for the next start.
    deps.store.releaseLease(row.eventId, "shutdown");
    log.info("invocation_released", { reason: "shutdown" });
    return null;
  }
  const rendered = outcome.ok
    ? await deps.render.reply(outcome.value, event)
    : await deps.render.fallback(fallbackText(deps.settings, outcome.error.code), event);
  // The marker lets a later resend find this reply in the room (sent-lookup.ts).
  const content = { ...rendered, [REPLY_MARKER_KEY]: row.matrixTxnId };
  const fields = outcome.ok
    ? { llm_iterations: outcome.value.llmIterations ?? 0, tool_calls: outcome.value.toolCalls ?? 0 }
    : { code: outcome.error.code };
  if (streamed !== undefined) log.info("stream_partials", { sends: streamed.sends, interval_ms: streamed.rateLimitedIntervalMs });
  log.info(outcome.ok ? "invocation_answered" : "invocation_failed", { duration_ms: now() - started, ...fields });
  const payload = JSON.stringify(content);
  deps.store.commitReady(row.eventId, payload);
  return { ...row, status: "ready_to_send", responseJson: payload, lastErrorCode: null };
}

// A streaming reply for an accepted candidate, when streaming is on.
function openStream(deps: WorkerDeps, row: InvocationRow, event: RawEvent, signal: AbortSignal, log: Logger, now: () => number): ReplyStream | null {
  const partial = deps.render.partial;
  if (deps.streaming === undefined || partial === undefined) return null;
  return new ReplyStream({
    store: deps.store, room: deps.room, sentLookup: deps.sentLookup, policy: deps.streaming, log, now,
    ...(deps.statusTexts === undefined ? {} : { statusTexts: deps.statusTexts }),
    render: (view) => partial.call(deps.render, view, event),
  }, row, signal);
}

async function respondSafely(
  respond: Responder, event: RawEvent, signal: AbortSignal, log: Logger, progress?: (progress: AnswerProgress) => void,
): Promise<Result<ReplyDraft, LisaError>> {
  try {
    return await respond(event, signal, progress);
  } catch (error) {
    // A bug in the pipeline still gets the in-character fallback, never the trace.
    log.error("responder_crashed", { code: errorCode(error) });
    return { ok: false, error: new LisaError(errorCode(error), "responder failed", { cause: error }) };
  }
}

/** The configured in-character error for a failure code. */
export function fallbackText(settings: Pick<WorkerSettings, "genericError" | "overloadError">, code: string): string {
  if (OVERLOAD_CODES.has(code)) return settings.overloadError;
  return settings.genericError.split("{error_code}").join(code);
}

/** Per-process send bookkeeping: transient failures and the token generations each reply was tried under. */
interface SendTracking {
  readonly failures: Map<string, number>;
  readonly tokens: Map<string, Set<number>>;
}

// A resend needs the room lookup unless every earlier attempt of this process
// used the current token; a reply from storage may have been tried by an
// earlier process under a token that no longer exists.
function needsLookup(tracking: SendTracking, eventId: string, generation: number, fresh: boolean): boolean {
  const tried = tracking.tokens.get(eventId);
  if (tried === undefined) return !fresh;
  return [...tried].some((token) => token !== generation);
}

async function sendStored(
  deps: WorkerDeps, row: InvocationRow, signal: AbortSignal, log: Logger, now: () => number, tracking: SendTracking, fresh: boolean,
  renewedBefore = false,
): Promise<void> {
  if (row.responseJson === null) throw new Error("ready_to_send row without a payload");
  if (!sendAllowed(deps, row, log, now)) return;
  const content = JSON.parse(row.responseJson) as Record<string, unknown>;
  const limit = deadlineFor(signal, SEND_DEADLINE_MS);
  try {
    await sendWithin(deps, row, content, signal, limit.signal, log, now, tracking, fresh, renewedBefore);
  } finally {
    limit.clear();
  }
}

// One send of a stored reply (the final edit of a streamed one), bounded by `sendSignal`.
async function sendWithin(
  deps: WorkerDeps, row: InvocationRow, content: Record<string, unknown>, signal: AbortSignal, sendSignal: AbortSignal,
  log: Logger, now: () => number, tracking: SendTracking, fresh: boolean, renewedBefore: boolean,
): Promise<void> {
  // A streamed reply ends by editing its message, never by a second one.
  const stream = deps.store.replyStream(row.eventId);
  if (stream !== null) {
    const edited = await sendFinalEdit({ room: deps.room, store: deps.store, sentLookup: deps.sentLookup, row, stream, content, signal: sendSignal });
    if (!edited.ok) return recordFailure(deps, row, edited.error, signal, log, now, tracking);
    deps.store.markSent(row.eventId, edited.value);
    forget(tracking, row.eventId);
    log.info("invocation_sent", { send_failures: row.lastErrorCode === null ? 0 : 1, streamed: true });
    return;
  }
  const before = deps.room.tokenGeneration();
  if (needsLookup(tracking, row.eventId, before, fresh)) {
    const found = await deps.sentLookup(row.roomId, row.eventId, row.matrixTxnId, sendSignal);
    if (!found.ok) return recordFailure(deps, row, found.error, signal, log, now, tracking);
    if (found.value !== null) {
      deps.store.markSent(row.eventId, found.value);
      forget(tracking, row.eventId);
      log.info("invocation_sent", { send_failures: row.lastErrorCode === null ? 0 : 1, found_in_room: true });
      return;
    }
  }
  // From here on only this token's attempts count: none before it reached the room.
  tracking.tokens.set(row.eventId, new Set([before]));
  const sent = await deps.room.sendMessage(row.roomId, row.matrixTxnId, content, sendSignal);
  if (sent.ok) {
    deps.store.markSent(row.eventId, sent.value);
    forget(tracking, row.eventId);
    log.info("invocation_sent", { send_failures: row.lastErrorCode === null ? 0 : 1 });
    return;
  }
  tracking.tokens.get(row.eventId)?.add(deps.room.tokenGeneration());
  // The token was renewed instead of the send repeated: look in the room, then send, once, right away.
  if (sent.error.code === MATRIX_CODES.sessionRenewed && !renewedBefore && !signal.aborted) {
    return sendStored(deps, row, signal, log, now, tracking, false, true);
  }
  recordFailure(deps, row, sent.error, signal, log, now, tracking);
}

// A reply that became ready before its room changed: into an encrypted room it
// is never sent; in a room Lisa cannot post in it stays the room's head, due
// at once, and goes out first when the room lets her send again.
function sendAllowed(deps: WorkerDeps, row: InvocationRow, log: Logger, now: () => number): boolean {
  const gate = deps.gate?.(row.roomId) ?? OPEN_GATE;
  if (gate.kind === "ignore") {
    deps.store.discardReady(row.eventId, gate.code);
    log.info("invocation_ignored", { reason: gate.code, reply_discarded: true });
    return false;
  }
  if (gate.kind === "hold") {
    deps.store.recordSendFailure(row.eventId, gate.code, now());
    log.info("send_held", { code: gate.code });
    return false;
  }
  return true;
}

function forget(tracking: SendTracking, eventId: string): void {
  tracking.failures.delete(eventId);
  tracking.tokens.delete(eventId);
}

function recordFailure(
  deps: WorkerDeps, row: InvocationRow, error: MatrixError, signal: AbortSignal, log: Logger, now: () => number, tracking: SendTracking,
): void {
  const prior = tracking.failures.get(row.eventId) ?? 0;
  tracking.failures.set(row.eventId, prior + 1);
  const retryAt = now() + sendBackoffMs(error, prior);
  deps.store.recordSendFailure(row.eventId, error.code, retryAt);
  if (signal.aborted) return;
  if (error.retryable) log.warn("send_pending", { code: error.code, retry_in_ms: retryAt - now() });
  else log.error("send_rejected", { code: error.code, http_status: error.httpStatus ?? 0, retry_in_ms: retryAt - now() });
}
