// A streaming reply while the answer is being written: partial answer text
// and status lines go into one message (first send, then `m.replace` edits
// paced by the edit scheduler), all through the worker's room send port.
// Exactly once: the first send uses the invocation's transaction id and
// carries the reply marker; each edit takes its sequence number durably
// first and uses `<txn>-e<seq>`; the message's event id is stored before any
// edit, in the same commit as the first block of edit numbers. A restarted
// Lisa finds the stored message (or looks for the marker in the room) and
// edits on. Partial sends are best effort: a failed one is not repeated
// (newer text follows), and a failed first send ends streaming for this
// reply; the final answer always goes out (stream-final.ts).

import type { Logger } from "../log/logger.ts";
import { MATRIX_CODES } from "../matrix/codes.ts";
import type { MatrixError } from "../matrix/errors.ts";
import type { RoomWritePort } from "../matrix/port.ts";
import { partialPreview, renderEdit } from "../render/index.ts";
import type { StateStore } from "../state/store.ts";
import type { InvocationRow } from "../state/types.ts";
import type { AnswerProgress } from "../llm/types.ts";
import { deadlineFor } from "./deadline.ts";
import { EditScheduler, type EditPolicy } from "./edit-scheduler.ts";
import { REPLY_MARKER_KEY, type SentReplyLookup } from "./sent-lookup.ts";

/** What a partial message shows. */
export interface PartialView {
  readonly markdown: string;
  readonly status: string | null;
}

/** The ledger operations of a streaming reply. */
export type StreamStore = Pick<StateStore, "replyStream" | "beginReplyStream" | "setReplyStreamEvent" | "reserveEditSeqs">;

/** Everything a streaming reply needs. */
export interface ReplyStreamDeps {
  readonly store: StreamStore;
  readonly room: RoomWritePort;
  readonly sentLookup: SentReplyLookup;
  /** The partial message content for a view (a rich reply to the invoking event). */
  readonly render: (view: PartialView) => Record<string, unknown> | Promise<Record<string, unknown>>;
  readonly policy: EditPolicy;
  readonly log: Logger;
  /** Milliseconds clock (monotonic in production). */
  readonly now: () => number;
  /** The status lines (the defaults when absent). */
  readonly statusTexts?: StatusTexts;
}

// How long one partial send may take.
const PARTIAL_SEND_DEADLINE_MS = 30_000;
// Edit sequence numbers reserved per ledger write (one write per this many edits).
const SEQ_BLOCK = 16;

/** Transaction id of edit number `seq` of an invocation's reply. */
export function editTxnId(txnId: string, seq: number): string {
  return `${txnId}-e${seq}`;
}

/** Transaction id of the final edit. */
export function finalTxnId(txnId: string): string {
  return `${txnId}-final`;
}

/** The status lines, in the persona's language (`persona.status_*`; `reading` has a `{host}` placeholder). */
export interface StatusTexts {
  readonly searching: string;
  readonly reading: string;
  readonly readingPage: string;
  readonly working: string;
}

/** The configuration's defaults. */
export const DEFAULT_STATUS_TEXTS: StatusTexts = {
  searching: "searching the web…", reading: "reading {host}…", readingPage: "reading a page…", working: "working on it…",
};

/** What members see while she uses a tool. */
export function toolStatus(name: string, url: string | null, texts: StatusTexts = DEFAULT_STATUS_TEXTS): string {
  if (name === "web_search") return texts.searching;
  if (name === "fetch_web_page") {
    try {
      const host = url === null ? "" : new URL(url).hostname.replace(/^www\./, "");
      if (host !== "" && host.length <= 100) return texts.reading.replaceAll("{host}", host);
    } catch {
      // An unusable URL: the generic line below.
    }
    return texts.readingPage;
  }
  if (name === "html_to_markdown") return texts.readingPage;
  return texts.working;
}

/** One invocation's streaming reply. */
export class ReplyStream {
  readonly #deps: ReplyStreamDeps;
  readonly #row: InvocationRow;
  readonly #signal: AbortSignal;
  readonly #scheduler: EditScheduler;
  #eventId: string | null;
  /** An earlier attempt may have sent the first message already. */
  #begun: boolean;
  #markdown = "";
  #status: string | null = null;
  #shownStatus: string | null = null;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  #inFlight: Promise<void> | null = null;
  /** Sends made (first and edits), for the log. */
  #sends = 0;
  /** Reserved edit sequence numbers not used yet: the next one and the end of the block. */
  #nextSeq = 0;
  #seqEnd = 0;
  /** The markdown length and status of the last send, to skip work for chunks that cannot change the decision. */
  #sentLength = 0;

  constructor(deps: ReplyStreamDeps, row: InvocationRow, signal: AbortSignal) {
    this.#deps = deps;
    this.#row = row;
    this.#signal = signal;
    const stored = deps.store.replyStream(row.eventId);
    this.#eventId = stored?.sentEventId ?? null;
    this.#begun = stored !== null;
    this.#scheduler = new EditScheduler(deps.policy, this.#eventId !== null);
  }

  /** The answerer's progress callback. */
  readonly progress = (progress: AnswerProgress): void => {
    if (this.#stopped) return;
    if (progress.kind === "text") {
      this.#markdown = progress.markdown;
      this.#status = null;
    } else {
      this.#markdown = "";
      this.#status = toolStatus(progress.name, progress.url, this.#deps.statusTexts);
    }
    // A chunk that only adds a little text to what was sent cannot make an edit due (a pending timer sends the latest text).
    const grown = this.#markdown.length - this.#sentLength;
    const small = this.#scheduler.started && this.#status === this.#shownStatus && grown >= 0 && grown < this.#deps.policy.minNewCharacters;
    if (small || this.#timer !== undefined) return;
    this.#pump();
  };

  /** Stops partial sends and waits for the one in flight, so the final edit comes last. */
  async finish(): Promise<{ readonly sends: number; readonly rateLimitedIntervalMs: number }> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#inFlight;
    return { sends: this.#sends, rateLimitedIntervalMs: this.#scheduler.intervalMs };
  }

  #pump(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#stopped || this.#inFlight !== null || this.#signal.aborted) return;
    const preview = partialPreview(this.#markdown);
    // Nothing is sent before the answer's first words: a status alone never opens the message.
    if (!this.#scheduler.started && preview === "") return;
    const text = this.#status === null ? preview : `${preview}\n${this.#status}`;
    const decision = this.#scheduler.decide(text, this.#deps.now(), this.#status !== this.#shownStatus);
    if (decision.kind === "idle") return;
    if (decision.kind === "wait") {
      this.#timer = setTimeout(() => this.#pump(), Math.max(0, decision.untilMs - this.#deps.now()));
      return;
    }
    this.#sentLength = this.#markdown.length;
    const view: PartialView = { markdown: this.#markdown, status: this.#status };
    this.#scheduler.sending();
    this.#inFlight = this.#send(view, text).finally(() => {
      this.#inFlight = null;
      this.#pump();
    });
  }

  async #send(view: PartialView, text: string): Promise<void> {
    const started = this.#deps.now();
    const limit = deadlineFor(this.#signal, PARTIAL_SEND_DEADLINE_MS);
    let error: MatrixError | null;
    try {
      const content = { ...(await this.#deps.render(view)), [REPLY_MARKER_KEY]: this.#row.matrixTxnId };
      error = this.#eventId === null ? await this.#first(content, limit.signal) : await this.#edit(this.#eventId, content, limit.signal);
    } finally {
      limit.clear();
    }
    const ok = error === null;
    if (ok) {
      this.#sends += 1;
      this.#shownStatus = view.status;
    }
    const limited = error?.code === MATRIX_CODES.rateLimited ? error.retryAfterMs ?? 0 : null;
    this.#scheduler.sent(text, ok, this.#deps.now(), this.#deps.now() - started, limited);
    if (error !== null) this.#deps.log.warn("stream_send_failed", { code: error.code, first: this.#eventId === null, interval_ms: this.#scheduler.intervalMs });
  }

  // The first send; any failure ends streaming (the final send finds or sends the message).
  async #first(content: Record<string, unknown>, signal: AbortSignal): Promise<MatrixError | null> {
    const { store, room, sentLookup } = this.#deps;
    if (this.#begun) {
      // An earlier attempt began this reply: its message may be in the room under another token.
      const found = await sentLookup(this.#row.roomId, this.#row.eventId, this.#row.matrixTxnId, signal);
      if (!found.ok) return this.#stop(found.error);
      if (found.value !== null) {
        this.#known(found.value);
        return this.#edit(found.value, content, signal);
      }
    }
    store.beginReplyStream(this.#row.eventId);
    this.#begun = true;
    const sent = await room.sendMessage(this.#row.roomId, this.#row.matrixTxnId, content, signal);
    if (!sent.ok) return this.#stop(sent.error);
    this.#known(sent.value);
    return null;
  }

  // One commit records the message and reserves the first block of edit numbers:
  // no edit can go out before it, so the reservation needs no commit of its own.
  #known(messageId: string): void {
    this.#nextSeq = this.#deps.store.setReplyStreamEvent(this.#row.eventId, messageId, SEQ_BLOCK);
    this.#seqEnd = this.#nextSeq + SEQ_BLOCK;
    this.#eventId = messageId;
  }

  async #edit(target: string, content: Record<string, unknown>, signal: AbortSignal): Promise<MatrixError | null> {
    if (this.#nextSeq >= this.#seqEnd) {
      this.#nextSeq = this.#deps.store.reserveEditSeqs(this.#row.eventId, SEQ_BLOCK);
      this.#seqEnd = this.#nextSeq + SEQ_BLOCK;
    }
    const seq = this.#nextSeq;
    this.#nextSeq += 1;
    const sent = await this.#deps.room.sendMessage(this.#row.roomId, editTxnId(this.#row.matrixTxnId, seq), renderEdit(target, content), signal);
    return sent.ok ? null : sent.error;
  }

  #stop(error: MatrixError): MatrixError {
    this.#stopped = true;
    return error;
  }
}
