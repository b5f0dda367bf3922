import type { RawEvent } from "../matrix/port.ts";

/** What the cheap candidate filter needs to know about Lisa. */
export interface CandidateFilter {
  readonly selfUserId: string;
  /** Mention aliases plus the full user id, already lower-cased. */
  readonly needles: readonly string[];
}

/** Builds the filter from configuration values. */
export function candidateFilter(selfUserId: string, aliases: readonly string[]): CandidateFilter {
  const needles = [...aliases, selfUserId].map((a) => a.trim().toLowerCase()).filter((a) => a.length > 0);
  return { selfUserId, needles };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Cheap, over-inclusive test for a possible invocation:
 * a new `m.room.message` `m.text` from someone else that may mention Lisa or
 * replies to something. The classifier decides precisely later.
 */
export function isCandidate(event: RawEvent, filter: CandidateFilter): boolean {
  if (event.type !== "m.room.message" || event.sender === filter.selfUserId) return false;
  return event.content["msgtype"] === "m.text" && mayInvoke(event.content, filter);
}

/** Message types that look like talking to Lisa but never invoke her. */
const IGNORED_MESSAGE_TYPES: ReadonlySet<string> = new Set(["m.notice", "m.emote"]);

/**
 * The msgtype of a notice or emote from someone else that mentions or replies
 * like a candidate would, else null. Such events are not candidates (only
 * `m.text` is stored); the ingestor logs them as ignored so an
 * operator can see why they got no answer.
 */
export function ignoredMessageType(event: RawEvent, filter: CandidateFilter): string | null {
  if (event.type !== "m.room.message" || event.sender === filter.selfUserId) return null;
  const msgtype = event.content["msgtype"];
  if (typeof msgtype !== "string" || !IGNORED_MESSAGE_TYPES.has(msgtype)) return null;
  return mayInvoke(event.content, filter) ? msgtype : null;
}

/** The ignore reason of an encrypted event: the room is end-to-end encrypted and Lisa reads none of it (LISA-ROOMSTATE-01). */
export const ENCRYPTED_EVENT_REASON = "room_encrypted";

/** An `m.room.encrypted` event from someone else: it may be addressed to Lisa, but she cannot read it. */
export function isEncryptedEvent(event: RawEvent, filter: CandidateFilter): boolean {
  return event.type === "m.room.encrypted" && event.sender !== filter.selfUserId;
}

// Whether message content may mention Lisa or reply to something (over-inclusive).
function mayInvoke(content: Readonly<Record<string, unknown>>, filter: CandidateFilter): boolean {
  const relates = content["m.relates_to"];
  if (isRecord(relates) && isRecord(relates["m.in_reply_to"])) return true;
  const mentions = content["m.mentions"];
  if (isRecord(mentions) && Array.isArray(mentions["user_ids"]) && mentions["user_ids"].includes(filter.selfUserId)) return true;
  const texts = [content["body"], content["formatted_body"]].filter((t): t is string => typeof t === "string");
  return texts.some((text) => {
    const lower = text.toLowerCase();
    return filter.needles.some((needle) => lower.includes(needle));
  });
}
