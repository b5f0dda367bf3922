import { LisaError } from "../errors.ts";
import type { Logger } from "../log/logger.ts";
import type { ContextConfig } from "../config/types.ts";
import type { HistoryPort, RawEvent } from "../matrix/port.ts";

/** Everything `buildRoomContext` needs for one invocation. */
export interface ContextRequest {
  readonly history: HistoryPort;
  readonly roomId: string;
  /** The accepted invoking event (the anchor; never dropped). */
  readonly invocation: RawEvent;
  /** Lisa's own Matrix user id, so her earlier messages are marked. */
  readonly selfUserId: string;
  readonly limits: ContextConfig;
  readonly signal: AbortSignal;
  readonly log: Logger;
}

/** The bounded, model-visible conversation context of one invocation. */
export interface RoomContext {
  /** The escaped `<room_context>` block. */
  readonly block: string;
  /** Number of `<message>` elements in the block (invocation and thread root included). */
  readonly messageCount: number;
  /** Characters of message bodies and reply excerpts counted against `max_characters`. */
  readonly characters: number;
  /** The thread the invocation belongs to, or null for the main timeline. */
  readonly thread: { readonly rootId: string } | null;
}

/** One conversational turn after normalisation (edits and redactions applied). */
export interface Turn {
  readonly eventId: string;
  readonly sender: string;
  readonly timestamp: number;
  /** `m.text`, `m.notice`, `m.emote`, or a media msgtype shown as a placeholder. */
  readonly msgtype: string;
  /** Normalised Markdown-like text, already capped at the per-event limit. */
  readonly body: string;
  /** Length of `body` in code points. */
  readonly length: number;
  readonly redacted: boolean;
  readonly edited: boolean;
  /** Rich-reply target (`m.in_reply_to`), excluding thread fallbacks. */
  readonly replyTo: string | null;
  /** Thread root when the event carries an `m.thread` relation. */
  readonly threadRoot: string | null;
}

/** An expected failure while building context (only aborts and unusable anchors). */
export class ContextError extends LisaError {}

/** The error returned when the invocation's signal fired. */
export function abortedError(signal: AbortSignal): ContextError {
  return new ContextError("context_aborted", "Context building was aborted", { retryable: true, cause: signal.reason });
}
