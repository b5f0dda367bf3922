// One line's worth of a thread for a list: its title (or the first words of
// its first prompt), its last activity and its last seq. Built from two reads
// the protocol already has: `threads.snapshot` with a one-event tail (the
// newest event's `createdAt` is the last activity) and `threads.replay` from
// the start up to the first `user_prompt` (the thread's own events come
// before it, so this reads a page or two, never the whole history).
import type { ReplayPage, ThreadEvent, ThreadSnapshot } from "../domain/contract/sdk-types.ts";
import { firstWords } from "../domain/first-words.ts";

export { firstWords };

/** A thread as a list shows it. */
export interface ThreadOverview {
  readonly threadId: string;
  /** The thread's configured title; null when none was set. */
  readonly title: string | null;
  /** Without a title: the start of the first prompt (cut at a word, `…` when cut); null with a title, before the first turn, or when its text is not retained. */
  readonly firstWords: string | null;
  /** `createdAt` of the newest event (ms since the epoch); null only when no event is left. */
  readonly lastActivityAt: number | null;
  readonly lastSeq: number;
  readonly busy: boolean;
}

/** Options of `threads.overview`. */
export interface OverviewOptions {
  /** Longest `firstWords` in characters before its `…` (default 48, at most 400). */
  readonly maxChars?: number;
}

/** Default and ceiling of `firstWords`, and the replay page the prompt search reads. */
export const OVERVIEW_LIMITS = { maxChars: 48, maxCharsCeiling: 400, page: 16 } as const;

/** The two reads the overview needs. */
export interface OverviewPort {
  snapshot(threadId: string, tailLimit: number): Promise<ThreadSnapshot>;
  replay(threadId: string, afterSeq: number, limit: number): Promise<ReplayPage>;
}

function promptText(event: ThreadEvent): string | null {
  const payload = event.payload as { text?: unknown } | undefined;
  return typeof payload?.text === "string" && payload.text.trim() !== "" ? payload.text : null;
}

/** The first `user_prompt` of the thread, or null when it has none. */
async function firstPrompt(port: OverviewPort, threadId: string): Promise<ThreadEvent | null> {
  for (let afterSeq = 0; ;) {
    const page = await port.replay(threadId, afterSeq, OVERVIEW_LIMITS.page);
    const found = page.events.find((e) => e.kind === "user_prompt");
    if (found !== undefined) return found;
    const last = page.events.at(-1);
    if (page.complete || last === undefined) return null;
    afterSeq = last.seq;
  }
}

/** Reads one thread's overview. */
export async function threadOverview(port: OverviewPort, threadId: string, options: OverviewOptions = {}): Promise<ThreadOverview> {
  const maxChars = Math.min(OVERVIEW_LIMITS.maxCharsCeiling, Math.max(1, Math.floor(options.maxChars ?? OVERVIEW_LIMITS.maxChars)));
  const snap = await port.snapshot(threadId, 1);
  const title = typeof snap.config.title === "string" && snap.config.title.trim() !== "" ? snap.config.title : null;
  const prompt = title === null ? await firstPrompt(port, threadId) : null;
  const text = prompt === null ? null : promptText(prompt);
  const newest = snap.tail.at(-1);
  return {
    threadId,
    title,
    firstWords: text === null ? null : firstWords(text, maxChars),
    lastActivityAt: newest?.createdAt ?? null,
    lastSeq: snap.lastSeq,
    busy: snap.busy,
  };
}
