// When a streaming reply is sent and edited (pure: the caller passes the
// clock). The first send goes out as soon as the answer shows its first
// words; after that at most one edit per interval, and only when enough new
// text arrived (or the status line changed). One send at a time: while one is
// in flight nothing else is decided. A send that met the homeserver's rate
// limit (M_LIMIT_EXCEEDED, or a send slowed by waiting out `retry_after_ms`)
// widens the interval for the rest of the reply, up to a ceiling.

/** The configured pace of one reply's edits. */
export interface EditPolicy {
  /** Least time between two sends, in ms. */
  readonly intervalMs: number;
  /** New characters needed for an edit (status changes need none). */
  readonly minNewCharacters: number;
  /** Characters the first send waits for. */
  readonly firstCharacters: number;
}

/** The widest interval rate limits may push edits to. */
export const MAX_EDIT_INTERVAL_MS = 60_000;

/** What to do now. */
export type EditDecision =
  | { readonly kind: "send"; readonly text: string }
  | { readonly kind: "wait"; readonly untilMs: number }
  | { readonly kind: "idle" };

/** Characters that differ between what was shown and what would be shown. */
export function changedCharacters(shown: string, next: string): number {
  const a = [...shown];
  const b = [...next];
  let common = 0;
  while (common < a.length && common < b.length && a[common] === b[common]) common += 1;
  return Math.max(a.length, b.length) - common;
}

/** One reply's send schedule. */
export class EditScheduler {
  readonly #policy: EditPolicy;
  #shown: string | null = null;
  #lastSendAtMs: number | null = null;
  #intervalMs: number;
  #inFlight = false;

  /** `resumed`: the message exists already (an earlier process sent it), so every send is an edit. */
  constructor(policy: EditPolicy, resumed = false) {
    this.#policy = policy;
    this.#intervalMs = policy.intervalMs;
    if (resumed) this.#shown = "";
  }

  /** The interval now in force (wider after rate limits). */
  get intervalMs(): number {
    return this.#intervalMs;
  }

  /** True once a first send succeeded. */
  get started(): boolean {
    return this.#shown !== null;
  }

  /** Decides for the text the message should show now; `significant` marks a status change. */
  decide(text: string, nowMs: number, significant = false): EditDecision {
    if (this.#inFlight || text.trim() === "") return { kind: "idle" };
    if (this.#shown === null) {
      return [...text].length >= this.#policy.firstCharacters || significant ? { kind: "send", text } : { kind: "idle" };
    }
    if (text === this.#shown) return { kind: "idle" };
    if (!significant && changedCharacters(this.#shown, text) < this.#policy.minNewCharacters) return { kind: "idle" };
    const due = this.#lastSendAtMs === null ? nowMs : this.#lastSendAtMs + this.#intervalMs;
    return nowMs < due ? { kind: "wait", untilMs: due } : { kind: "send", text };
  }

  /** A send of `text` starts. */
  sending(): void {
    this.#inFlight = true;
  }

  /**
   * The send ended at `nowMs` after `durationMs`. `rateLimitedMs` is the
   * server's `retry_after_ms` (or 0) when it refused with M_LIMIT_EXCEEDED.
   */
  sent(text: string, ok: boolean, nowMs: number, durationMs: number, rateLimitedMs: number | null = null): void {
    this.#inFlight = false;
    this.#lastSendAtMs = nowMs;
    if (ok) this.#shown = text;
    const slowed = durationMs > this.#intervalMs;
    if (rateLimitedMs !== null || slowed) {
      const wanted = Math.max(this.#intervalMs * 2, rateLimitedMs ?? 0, slowed ? durationMs : 0);
      this.#intervalMs = Math.min(MAX_EDIT_INTERVAL_MS, Math.max(this.#policy.intervalMs, wanted));
    }
  }
}
