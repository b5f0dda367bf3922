// Event preparation of streamed text (P-CAP-10, issue 27): an Executor
// decorator that scans each text or reasoning block (one channel + messageId)
// as its chunks arrive and releases the scanned text at once, holding back
// only the tail a detector could still match across the next chunk
// (capture/stream-hold.ts), so no secret is released in pieces and a reader
// sees words appear. Other events keep their place: one that arrives while a
// block holds a tail waits for that tail. A permission request, a message's
// completion or the end of the prompt releases what is held. A block past the
// byte bound, or one the scanner cannot take, ends in one omission marker
// chunk and is never forwarded raw; a failed scanner drops the rest of that
// block (fail closed) and the turn goes on.
import type { BlockRedactor, TextSpan } from "../domain/redaction-port.ts";
import type { ContextBlock, Executor, ExecutorEvent, PreparedSession, SessionSetup, SetupResult, TurnSink } from "../domain/executor-port.ts";
import { ControllerFailure } from "../domain/errors.ts";
import { mapSpansToChunks } from "./redactor.ts";
import { OMISSION_PREFIX, SECRET_DETECTORS } from "./secret-detectors.ts";
import { releasePoint } from "./stream-hold.ts";
import { detectorWindows, type DetectorWindow } from "./stream-window.ts";

/** Largest block (UTF-16 units) streamed before it ends in an omission marker. */
export const BLOCK_LIMIT_DEFAULT = 1024 * 1024;
export const BLOCK_LIMIT_CAP = 16 * 1024 * 1024;

const WINDOWS = detectorWindows(SECRET_DETECTORS);
// The pinned detectors look behind by one character at most.
const CONTEXT = 1;
const LIMIT_MARKER = `${OMISSION_PREFIX}block_limit]`;

type Channel = "text" | "reasoning";
/** One block: the unreleased tail `pending` starts at absolute offset `base`; `ctx` is the released text just before it. */
type Block = { channel: Channel; messageId: string | null; pending: string; base: number; ctx: string; size: number; state: "open" | "failed" | "overflowed" };
/** An event in line: text pieces are ready; other events wait until each named block has released up to its offset. */
type Queued = { event: ExecutorEvent; waits: Map<Block, number> | null };

function blockKey(channel: string, messageId: string | null): string {
  return `${channel}\u0000${messageId ?? ""}`;
}

/** Per-dispatch streaming state. */
export class StreamBuffer {
  readonly #blocks = new Map<string, Block>();
  readonly #queue: Queued[] = [];
  readonly #redactor: BlockRedactor;
  readonly #limit: number;
  readonly #forward: (e: ExecutorEvent) => void;
  readonly #windows: readonly DetectorWindow[];

  constructor(redactor: BlockRedactor, limit: number, forward: (e: ExecutorEvent) => void, windows: readonly DetectorWindow[] = WINDOWS) {
    this.#redactor = redactor;
    this.#limit = limit;
    this.#forward = forward;
    this.#windows = windows;
  }

  push(e: ExecutorEvent): void {
    if (e.type === "text" || e.type === "reasoning") return this.#chunk(e.type, e.messageId, e.text);
    if (e.type === "message_completed") {
      const key = blockKey(e.channel, e.messageId);
      const block = this.#blocks.get(key);
      if (block !== undefined) this.#release([block], true);
      this.#blocks.delete(key);
    }
    this.#enqueue(e);
  }

  /** Releases every held tail (a permission request or the end of the prompt) and everything waiting on them. */
  flush(): void {
    this.#release([...this.#blocks.values()], true);
    this.#drain();
  }

  #chunk(channel: Channel, messageId: string | null, text: string): void {
    const key = blockKey(channel, messageId);
    let block = this.#blocks.get(key);
    if (block === undefined) {
      block = { channel, messageId, pending: "", base: 0, ctx: "", size: 0, state: "open" };
      this.#blocks.set(key, block);
    }
    if (block.state !== "open") return;
    block.size += text.length;
    block.pending += text;
    if (block.size > this.#limit) this.#end(block, "overflowed");
    else this.#release([block], false);
    this.#drain();
  }

  /** Scans the blocks' tails (with the context a lookbehind needs) and releases what is final. */
  #release(blocks: readonly Block[], final: boolean): void {
    const live = blocks.filter((b) => b.state === "open" && b.pending.length > 0);
    if (live.length === 0) return;
    const scanned = this.#redactor.scanSpans(live.map((b) => b.ctx + b.pending));
    live.forEach((block, i) => {
      if (scanned === null) return this.#end(block, "failed");
      if (scanned === "overflow") return this.#end(block, "overflowed");
      const shift = block.ctx.length;
      const spans: TextSpan[] = (scanned[i] ?? []).filter((s) => s.end > shift).map((s) => ({ start: Math.max(0, s.start - shift), end: s.end - shift, detector: s.detector }));
      const r = final ? block.pending.length : releasePoint(block.pending, spans, this.#windows);
      if (r === 0) return;
      // Split at the offsets other events wait for, so each piece keeps its place in line.
      const cuts = [0];
      for (const q of this.#queue) {
        const m = (q.waits?.get(block) ?? 0) - block.base;
        if (m > cuts[cuts.length - 1]! && m < r) cuts.push(m);
      }
      cuts.push(r);
      const slices = cuts.slice(1).map((c, j) => block.pending.slice(cuts[j], c));
      const texts = mapSpansToChunks(slices, spans.filter((s) => s.start < r));
      texts.forEach((text, j) => { if (text.length > 0) this.#place(block, block.base + (cuts[j] as number), text); });
      block.ctx = block.pending.slice(Math.max(0, r - CONTEXT), r);
      block.base += r;
      block.pending = block.pending.slice(r);
    });
  }

  /** Ends a block's streaming: its unreleased tail is never forwarded; an overflow leaves one marker. */
  #end(block: Block, state: "failed" | "overflowed"): void {
    if (state === "overflowed") this.#place(block, block.base, LIMIT_MARKER);
    block.base += block.pending.length;
    block.pending = "";
    block.state = state;
  }

  /** Puts a released piece before the first event that waits for text after `at`. */
  #place(block: Block, at: number, text: string): void {
    const event: ExecutorEvent = { type: block.channel, messageId: block.messageId, text };
    const index = this.#queue.findIndex((q) => (q.waits?.get(block) ?? -1) > at);
    if (index === -1) this.#queue.push({ event, waits: null });
    else this.#queue.splice(index, 0, { event, waits: null });
  }

  #enqueue(e: ExecutorEvent): void {
    const waits = new Map<Block, number>();
    for (const b of this.#blocks.values()) if (b.pending.length > 0) waits.set(b, b.base + b.pending.length);
    this.#queue.push({ event: e, waits: waits.size > 0 ? waits : null });
    this.#drain();
  }

  #drain(): void {
    while (this.#queue.length > 0) {
      const head = this.#queue[0] as Queued;
      if (head.waits !== null && [...head.waits].some(([b, m]) => b.base < m)) return;
      this.#queue.shift();
      this.#forward(head.event);
    }
  }
}

class RedactingSession implements PreparedSession {
  readonly #inner: PreparedSession;
  readonly #redactor: BlockRedactor;
  readonly #limit: number;
  /** Present exactly when the inner session can steer (turns.steer). */
  readonly steer?: (text: string) => Promise<{ ok: true } | { ok: false; code: string }>;

  constructor(inner: PreparedSession, redactor: BlockRedactor, limit: number) {
    this.#inner = inner;
    if (inner.steer !== undefined) this.steer = (text) => (inner.steer as NonNullable<PreparedSession["steer"]>).call(inner, text);
    this.#redactor = redactor;
    this.#limit = limit;
  }

  get nativeSessionId(): string { return this.#inner.nativeSessionId; }
  get nativeMode() { return this.#inner.nativeMode; }

  async dispatch(prompt: string, sink: TurnSink, context?: readonly ContextBlock[]) {
    const buffer = new StreamBuffer(this.#redactor, this.#limit, (e) => {
      // A durable write that failed closed (scanner down) drops that event; the turn and service go on.
      try { sink.event(e); } catch (caught) { if (!(caught instanceof ControllerFailure)) throw caught; }
    });
    try {
      return await this.#inner.dispatch(prompt, {
        // The engine learns at once that the provider works, even while a tail is held.
        event: (e) => { sink.event({ type: "activity" }); buffer.push(e); },
        permission: (ask) => { buffer.flush(); return sink.permission(ask); },
      }, context);
    } finally {
      buffer.flush();
    }
  }

  cancel(): void { this.#inner.cancel(); }
  close(): Promise<void> { return this.#inner.close(); }
}

/** Wraps an executor so every dispatched turn's text is scanned and streamed (see the file comment). */
export function blockRedactingExecutor(inner: Executor, redactor: BlockRedactor, limit = BLOCK_LIMIT_DEFAULT): Executor {
  const bound = Math.min(Math.max(1, limit), BLOCK_LIMIT_CAP);
  return {
    async prepare(setup: SessionSetup): Promise<SetupResult> {
      const r = await inner.prepare(setup);
      return r.ok ? { ...r, session: new RedactingSession(r.session, redactor, bound) } : r;
    },
    forget: (s) => inner.forget?.(s) ?? Promise.resolve("unsupported"),
    ...(inner.capabilities === undefined ? {} : { capabilities: (providerId: string) => (inner.capabilities as NonNullable<Executor["capabilities"]>).call(inner, providerId) }),
    close: () => inner.close(),
  };
}
