// Event preparation in whole logical blocks (P-CAP-10): an Executor
// decorator that holds a turn's events while a text or reasoning block (one
// channel + messageId) is open, redacts each block whole when it completes,
// and then releases every held event in its original order. A permission
// request or the end of the prompt releases what is held first. A block past
// the byte bound, or one the scanner cannot take, is replaced by one omission
// marker chunk and never forwarded raw; a failed scanner drops the held text
// (fail closed) and the turn goes on.
import type { BlockRedactor } from "../domain/redaction-port.ts";
import type { ContextBlock, Executor, ExecutorEvent, PreparedSession, SessionSetup, SetupResult, TurnSink } from "../domain/executor-port.ts";
import { ControllerFailure } from "../domain/errors.ts";
import { OMISSION_PREFIX } from "./secret-detectors.ts";

/** Largest block held for whole-block redaction (bytes of UTF-16 text). */
export const BLOCK_LIMIT_DEFAULT = 1024 * 1024;
export const BLOCK_LIMIT_CAP = 16 * 1024 * 1024;

type Chunk = Extract<ExecutorEvent, { type: "text" | "reasoning" }>;

function blockKey(channel: string, messageId: string | null): string {
  return `${channel}\u0000${messageId ?? ""}`;
}

/** Per-dispatch buffering state. */
class BlockBuffer {
  readonly #held: ExecutorEvent[] = [];
  readonly #open = new Map<string, number>();
  readonly #overflowed = new Set<string>();
  readonly #redactor: BlockRedactor;
  readonly #limit: number;
  readonly #forward: (e: ExecutorEvent) => void;

  constructor(redactor: BlockRedactor, limit: number, forward: (e: ExecutorEvent) => void) {
    this.#redactor = redactor;
    this.#limit = limit;
    this.#forward = forward;
  }

  push(e: ExecutorEvent): void {
    if (e.type === "text" || e.type === "reasoning") {
      const key = blockKey(e.type, e.messageId);
      if (this.#overflowed.has(key)) return;
      const size = (this.#open.get(key) ?? 0) + e.text.length;
      this.#open.set(key, size);
      this.#held.push(e);
      if (size > this.#limit) this.#overflow(key, e);
      return;
    }
    if (e.type === "message_completed") {
      const key = blockKey(e.channel, e.messageId);
      this.#held.push(e);
      this.#open.delete(key);
      this.#overflowed.delete(key);
      if (this.#open.size === 0) this.flush();
      return;
    }
    this.#held.push(e);
    if (this.#open.size === 0) this.flush();
  }

  #overflow(key: string, e: Chunk): void {
    // The held chunks of that block are replaced by one omission marker chunk.
    let placed = false;
    for (let i = 0; i < this.#held.length; i++) {
      const h = this.#held[i] as ExecutorEvent;
      if ((h.type === "text" || h.type === "reasoning") && blockKey(h.type, h.messageId) === key) {
        if (!placed) { this.#held[i] = { type: e.type, messageId: e.messageId, text: `${OMISSION_PREFIX}block_limit]` }; placed = true; }
        else { this.#held.splice(i, 1); i--; }
      }
    }
    this.#overflowed.add(key);
    this.#open.set(key, 0);
  }

  /** Redacts every held block whole and forwards all held events in order. */
  flush(): void {
    if (this.#held.length === 0) return;
    const held = this.#held.splice(0);
    const order: string[] = [];
    const blocks = new Map<string, string[]>();
    for (const h of held) {
      if (h.type !== "text" && h.type !== "reasoning") continue;
      const key = blockKey(h.type, h.messageId);
      if (!blocks.has(key)) { blocks.set(key, []); order.push(key); }
      (blocks.get(key) as string[]).push(h.text);
    }
    const redacted = order.length === 0 ? [] : this.#redactor.redactBlocks(order.map((k) => blocks.get(k) as string[]));
    const next = new Map<string, string[]>();
    order.forEach((k, i) => {
      if (redacted === null) next.set(k, []);
      else if (redacted === "overflow") next.set(k, [`${OMISSION_PREFIX}block_limit]`]);
      else next.set(k, redacted[i] ?? []);
    });
    for (const h of held) {
      if (h.type !== "text" && h.type !== "reasoning") { this.#forward(h); continue; }
      const texts = next.get(blockKey(h.type, h.messageId)) as string[];
      const text = texts.shift();
      // Nothing left for this chunk (scanner failed): nothing is forwarded raw.
      if (text !== undefined) this.#forward({ ...h, text });
    }
  }
}

class RedactingSession implements PreparedSession {
  readonly #inner: PreparedSession;
  readonly #redactor: BlockRedactor;
  readonly #limit: number;

  constructor(inner: PreparedSession, redactor: BlockRedactor, limit: number) {
    this.#inner = inner;
    this.#redactor = redactor;
    this.#limit = limit;
  }

  get nativeSessionId(): string { return this.#inner.nativeSessionId; }
  get nativeMode() { return this.#inner.nativeMode; }

  async dispatch(prompt: string, sink: TurnSink, context?: readonly ContextBlock[]) {
    const buffer = new BlockBuffer(this.#redactor, this.#limit, (e) => {
      // A durable write that failed closed (scanner down) drops that event; the turn and service go on.
      try { sink.event(e); } catch (caught) { if (!(caught instanceof ControllerFailure)) throw caught; }
    });
    try {
      return await this.#inner.dispatch(prompt, {
        // The engine learns at once that the provider works, even while content is held.
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

/** Wraps an executor so every dispatched turn's events are prepared in whole blocks. */
export function blockRedactingExecutor(inner: Executor, redactor: BlockRedactor, limit = BLOCK_LIMIT_DEFAULT): Executor {
  const bound = Math.min(Math.max(1, limit), BLOCK_LIMIT_CAP);
  return {
    async prepare(setup: SessionSetup): Promise<SetupResult> {
      const r = await inner.prepare(setup);
      return r.ok ? { ...r, session: new RedactingSession(r.session, redactor, bound) } : r;
    },
    close: () => inner.close(),
  };
}
