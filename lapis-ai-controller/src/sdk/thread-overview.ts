// One line's worth of a thread for a list: its title (or the first words of
// its first prompt), its last activity, its last seq and whether a turn is
// queued or running. The SDK's `threads.overview` reads it with one
// `threads.list` call naming the thread (the service computes the row).
import { firstWords } from "../domain/first-words.ts";

export { firstWords };

/** A thread as a list shows it. */
export interface ThreadOverview {
  readonly threadId: string;
  /** The thread's configured title; null when none was set. */
  readonly title: string | null;
  /** Without a title: the start of the first prompt (cut at a word, `…` when cut); null with a title, before the first turn, or when its text is not retained. */
  readonly firstWords: string | null;
  /** `createdAt` of the newest event (ms since the epoch); the thread's creation before any. */
  readonly lastActivityAt: number | null;
  readonly lastSeq: number;
  /** A turn is queued or running. */
  readonly busy: boolean;
}

/** Options of `threads.overview`. */
export interface OverviewOptions {
  /** Longest `firstWords` in characters before its `…` (default 48, at most 400). */
  readonly maxChars?: number;
}

/** Default and ceiling of `firstWords`. */
export const OVERVIEW_LIMITS = { maxChars: 48, maxCharsCeiling: 400 } as const;

/** The `firstWords` bound of an overview: default 48, between 1 and the ceiling. */
export function overviewChars(options: OverviewOptions = {}): number {
  return Math.min(OVERVIEW_LIMITS.maxCharsCeiling, Math.max(1, Math.floor(options.maxChars ?? OVERVIEW_LIMITS.maxChars)));
}
