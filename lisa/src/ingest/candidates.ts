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
 * Cheap, over-inclusive test for a possible invocation (design 10.2 step 5):
 * a new `m.room.message` `m.text` from someone else that may mention Lisa or
 * replies to something. The classifier decides precisely later.
 */
export function isCandidate(event: RawEvent, filter: CandidateFilter): boolean {
  if (event.type !== "m.room.message" || event.sender === filter.selfUserId) return false;
  const content = event.content;
  if (content["msgtype"] !== "m.text") return false;
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
