import type { HistoryPort, RawEvent } from "../matrix/port.ts";

/** Why a candidate was accepted. */
export type AcceptReason = "mention" | "reply";

/** The classifier's verdict; every rejection carries a stable reason code. */
export type Classification =
  | { readonly accepted: true; readonly reason: AcceptReason; readonly event: RawEvent }
  | { readonly accepted: false; readonly reason: string; readonly retryable?: boolean };

/** What classification needs to know; the reply check is a narrow port. */
export interface ClassifierSettings {
  readonly selfUserId: string;
  readonly allowedRoomIds: ReadonlySet<string>;
  readonly mentionAliases: readonly string[];
}

/** Looks up whether `eventId` in `roomId` was sent by Lisa (ledger first, then the server). */
export type ReplyTargetCheck = (roomId: string, eventId: string, signal: AbortSignal) => Promise<ReplyTargetVerdict>;
/** Result of checking a reply target: Lisa's, not Lisa's, or unknown because the lookup failed transiently. */
export type ReplyTargetVerdict = "lisa" | "other" | "unavailable";

// Characters that count as part of a word for alias boundaries.
const WORD = String.raw`[\p{L}\p{N}\p{M}_]`;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
}

/** Removes a Matrix rich-reply fallback (leading `> ` lines and the blank line after them). */
export function stripReplyFallback(body: string): string {
  const lines = body.split("\n");
  let index = 0;
  while (index < lines.length && (lines[index] ?? "").startsWith(">")) index += 1;
  if (index === 0) return body;
  if (index < lines.length && (lines[index] ?? "").trim() === "") index += 1;
  return lines.slice(index).join("\n");
}

/** Builds a matcher for the aliases and user id: Unicode case-folded, at non-word boundaries. */
export function aliasMatcher(aliases: readonly string[], selfUserId: string): (text: string) => boolean {
  const forms = [...new Set([...aliases, selfUserId].map((a) => a.trim().normalize("NFC")).filter((a) => a.length > 0))];
  const pattern = new RegExp(`(?<!${WORD})(?:${forms.map(escapeRegExp).join("|")})(?!${WORD})`, "iu");
  return (text) => pattern.test(text.normalize("NFC"));
}

/** The rich-reply target of an event, if any. */
export function replyTargetOf(content: Readonly<Record<string, unknown>>): string | null {
  const relates = content["m.relates_to"];
  if (!isRecord(relates)) return null;
  const inReplyTo = relates["m.in_reply_to"];
  if (!isRecord(inReplyTo) || typeof inReplyTo["event_id"] !== "string") return null;
  return inReplyTo["event_id"];
}

/** Parses the stored raw event and checks the fields every later stage relies on. */
export function parseStoredEvent(rawEventJson: string | null): RawEvent | null {
  if (rawEventJson === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(rawEventJson);
  } catch {
    return null;
  }
  if (!isRecord(value) || !isRecord(value["content"])) return null;
  const { event_id: id, type, sender, origin_server_ts: ts, room_id: room } = value;
  if (typeof id !== "string" || typeof type !== "string" || typeof sender !== "string" || typeof ts !== "number") return null;
  if (typeof room !== "string") return null;
  return value as unknown as RawEvent;
}

/**
 * Classifies a durable candidate. The checks run in a fixed order (parsable,
 * allowed room, a message, `m.text`, not her own, not redacted, a body, not
 * an edit, a well-formed relation, not before the baseline, then a mention
 * before a reply to her), and the first that fails names the reason, so one
 * event always gets the same verdict. `baselineTsMs` is the room's baseline anchor time: older events are history.
 */
export async function classifyCandidate(
  event: RawEvent | null,
  roomId: string,
  settings: ClassifierSettings,
  context: { readonly matches: (text: string) => boolean; readonly replyTarget: ReplyTargetCheck; readonly baselineTsMs: number | null },
  signal: AbortSignal,
): Promise<Classification> {
  if (event === null) return { accepted: false, reason: "malformed_event" };
  if (!settings.allowedRoomIds.has(roomId) || event.room_id !== roomId) return { accepted: false, reason: "room_not_allowed" };
  if (event.type !== "m.room.message") return { accepted: false, reason: "not_a_message" };
  const content = event.content;
  if (content["msgtype"] !== "m.text") return { accepted: false, reason: "not_text" };
  if (event.sender === settings.selfUserId) return { accepted: false, reason: "own_message" };
  if (isRecord(event.unsigned) && event.unsigned["redacted_because"] !== undefined) return { accepted: false, reason: "redacted" };
  if (typeof content["body"] !== "string" || content["body"].trim() === "") return { accepted: false, reason: "malformed_content" };
  const relates = content["m.relates_to"];
  if (isRecord(relates) && relates["rel_type"] === "m.replace") return { accepted: false, reason: "edit" };
  if (relates !== undefined && !isRecord(relates)) return { accepted: false, reason: "malformed_content" };
  if (context.baselineTsMs !== null && event.origin_server_ts < context.baselineTsMs - BASELINE_SKEW_MS) {
    return { accepted: false, reason: "before_baseline" };
  }
  const target = replyTargetOf(content);
  if (mentionsLisa(content, settings.selfUserId, context.matches)) return { accepted: true, reason: "mention", event };
  if (target !== null) {
    const verdict = await context.replyTarget(roomId, target, signal);
    if (verdict === "lisa") return { accepted: true, reason: "reply", event };
    if (verdict === "unavailable") return { accepted: false, reason: "reply_target_unavailable", retryable: true };
    return { accepted: false, reason: "reply_to_other" };
  }
  return { accepted: false, reason: "no_mention" };
}

/** Allowance for clock skew when comparing against the baseline anchor time. */
export const BASELINE_SKEW_MS = 5_000;

function mentionsLisa(content: Readonly<Record<string, unknown>>, selfUserId: string, matches: (text: string) => boolean): boolean {
  const mentions = content["m.mentions"];
  if (isRecord(mentions) && Array.isArray(mentions["user_ids"]) && mentions["user_ids"].includes(selfUserId)) return true;
  const body = content["body"];
  if (typeof body !== "string") return false;
  const text = replyTargetOf(content) === null ? body : stripReplyFallback(body);
  return matches(text);
}

/** Reply verification: the ledger's bot events first, then the event from the server. */
export function replyTargetCheck(
  isBotEvent: (eventId: string, roomId: string) => boolean,
  history: Pick<HistoryPort, "event">,
  selfUserId: string,
): ReplyTargetCheck {
  return async (roomId, eventId, signal) => {
    if (isBotEvent(eventId, roomId)) return "lisa";
    const fetched = await history.event(roomId, eventId, signal);
    if (!fetched.ok) return fetched.error.retryable ? "unavailable" : "other";
    const target = fetched.value;
    const sameRoom = target.room_id === undefined || target.room_id === roomId;
    return sameRoom && target.sender === selfUserId ? "lisa" : "other";
  };
}
