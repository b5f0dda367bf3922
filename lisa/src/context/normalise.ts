import type { RawEvent } from "../matrix/port.ts";
import { htmlToText } from "./html-to-text.ts";
import { TextMemo } from "./text-memo.ts";
import { cleanText, countChars, truncateText } from "./text.ts";
import type { Turn } from "./types.ts";

// Formatted bodies seen in recent contexts (about 1 MB of text at most).
const formattedText = new TextMemo(htmlToText, { maxEntries: 512, maxCharacters: 500_000 });

// Turns raw Matrix events into conversational turns: only
// m.room.message events become turns; edits and redactions found in the same
// fetched context are applied to their originals and never shown themselves.

/** Body shown for redacted messages. */
export const REDACTED_BODY = "[message redacted]";

const TEXT_MSGTYPES = new Set(["m.text", "m.notice", "m.emote"]);
// Media are not conversational text; a placeholder keeps the turn visible.
const MEDIA_PLACEHOLDERS: Readonly<Record<string, string>> = {
  "m.image": "[image]", "m.file": "[file]", "m.audio": "[audio]", "m.video": "[video]", "m.location": "[location]",
};

const USER_ID = /^@[^:\s]+:\S+$/;

/** The parts of `m.relates_to` context building reads. */
export interface Relation {
  readonly relType: string | null;
  readonly eventId: string | null;
  readonly inReplyTo: string | null;
  readonly isFallingBack: boolean;
}

function record(value: unknown): Record<string, unknown> | null {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function str(value: unknown): string | null {
  return typeof value === "string" && value.length > 0 ? value : null;
}

/** Reads `m.relates_to` of an event's content. */
export function relationOf(content: Readonly<Record<string, unknown>>): Relation {
  const rel = record(content["m.relates_to"]);
  return {
    relType: str(rel?.["rel_type"]),
    eventId: str(rel?.["event_id"]),
    inReplyTo: str(record(rel?.["m.in_reply_to"])?.["event_id"]),
    isFallingBack: rel?.["is_falling_back"] === true,
  };
}

/** Thread root id when the event belongs to a thread (`rel_type == "m.thread"`). */
export function threadRootOf(event: RawEvent): string | null {
  const rel = relationOf(event.content);
  return rel.relType === "m.thread" ? rel.eventId : null;
}

/** The genuine rich-reply target: thread fallbacks (`is_falling_back`) are not replies. */
export function replyTargetOf(event: RawEvent): string | null {
  const rel = relationOf(event.content);
  if (rel.relType === "m.thread" && rel.isFallingBack) return null;
  return rel.inReplyTo;
}

/**
 * Removes Matrix's plain-text rich-reply fallback: leading `>` lines followed
 * by a blank line. Bodies without that exact shape are returned unchanged.
 */
export function stripReplyFallback(body: string): string {
  const lines = body.split("\n");
  let i = 0;
  while (i < lines.length && (lines[i] ?? "").startsWith(">")) i += 1;
  if (i === 0 || i >= lines.length || (lines[i] ?? "").trim() !== "") return body;
  return lines.slice(i + 1).join("\n");
}

/** True when the event has the minimal valid envelope (ids, sender, timestamp). */
export function hasValidEnvelope(event: RawEvent): boolean {
  return (
    typeof event.event_id === "string" && event.event_id.startsWith("$") &&
    typeof event.sender === "string" && USER_ID.test(event.sender) &&
    typeof event.origin_server_ts === "number" && Number.isFinite(event.origin_server_ts) &&
    record(event.content) !== null
  );
}

/** True for an `m.room.message` that is an edit of another event. */
export function isEdit(event: RawEvent): boolean {
  return event.type === "m.room.message" && relationOf(event.content).relType === "m.replace";
}

function isRedacted(event: RawEvent): boolean {
  return record(event.unsigned?.["redacted_because"]) !== null || Object.keys(event.content).length === 0;
}

/** Normalised text of message content, or null when the content is not usable text. */
function contentText(content: Readonly<Record<string, unknown>>, isReply: boolean): { msgtype: string; text: string } | null {
  const msgtype = str(content["msgtype"]);
  if (msgtype === null) return null;
  const placeholder = MEDIA_PLACEHOLDERS[msgtype];
  if (placeholder !== undefined) return { msgtype, text: placeholder };
  const body = content["body"];
  if (!TEXT_MSGTYPES.has(msgtype) || typeof body !== "string") return null;
  const html = content["formatted_body"];
  if (content["format"] === "org.matrix.custom.html" && typeof html === "string") {
    const text = formattedText.get(html);
    if (text.length > 0) return { msgtype, text };
  }
  const plain = cleanText(isReply ? stripReplyFallback(body) : body).trim();
  return { msgtype, text: plain };
}

/** Options shared by every normalisation in one context. */
export interface NormaliseOptions {
  /** Per-event cap in code points. */
  readonly maxEventCharacters: number;
  /** Events after this server timestamp (the invocation's) never change a turn. */
  readonly latestTimestamp: number;
}

function capped(text: string, options: NormaliseOptions): { body: string; length: number } {
  const body = truncateText(text, options.maxEventCharacters).text;
  return { body, length: countChars(body) };
}

function redactedTurn(event: RawEvent, options: NormaliseOptions): Turn {
  const rel = relationOf(event.content);
  return {
    eventId: event.event_id, sender: event.sender, timestamp: event.origin_server_ts, msgtype: "m.text",
    ...capped(REDACTED_BODY, options), redacted: true, edited: false, replyTo: null,
    threadRoot: rel.relType === "m.thread" ? rel.eventId : null,
  };
}

/**
 * Normalises one `m.room.message` (not an edit) into a turn, applying `edit`
 * (an already validated replacement by the same sender). Null when the event
 * is not a usable conversational message.
 */
export function normaliseMessage(event: RawEvent, options: NormaliseOptions, edit: RawEvent | null = null): Turn | null {
  if (event.type !== "m.room.message" || !hasValidEnvelope(event) || isEdit(event)) return null;
  if (isRedacted(event)) return redactedTurn(event, options);
  const replyTo = replyTargetOf(event);
  const original = contentText(event.content, replyTo !== null);
  if (original === null) return null;
  const newContent = edit === null ? null : record(edit.content["m.new_content"]);
  const replaced = newContent === null ? null : contentText(newContent, false);
  const chosen = replaced ?? original;
  return {
    eventId: event.event_id, sender: event.sender, timestamp: event.origin_server_ts, msgtype: chosen.msgtype,
    ...capped(chosen.text, options), redacted: false, edited: replaced !== null, replyTo, threadRoot: threadRootOf(event),
  };
}

/** A server-bundled latest edit (`unsigned["m.relations"]["m.replace"]`) when it is a full event. */
function bundledEdit(event: RawEvent): RawEvent | null {
  const bundled = record(record(event.unsigned?.["m.relations"])?.["m.replace"]);
  if (bundled === null) return null;
  const candidate = bundled as unknown as RawEvent;
  if (typeof candidate.type !== "string" || !hasValidEnvelope(candidate) || !isEdit(candidate)) return null;
  return relationOf(candidate.content).eventId === event.event_id ? candidate : null;
}

function redactedTarget(event: RawEvent): string | null {
  if (event.type !== "m.room.redaction") return null;
  return str(event.content["redacts"]) ?? str((event as unknown as Record<string, unknown>)["redacts"]);
}

/**
 * Normalises every message in `events` (one fetched context, chronological),
 * applying edits by the original sender and redactions found among them.
 * Returns turns keyed by event id, in input order.
 */
export function normaliseEvents(events: readonly RawEvent[], options: NormaliseOptions): Map<string, Turn> {
  const byId = new Map<string, RawEvent>();
  for (const event of events) if (hasValidEnvelope(event)) byId.set(event.event_id, event);
  const edits = new Map<string, RawEvent>();
  const redacted = new Set<string>();
  const consider = (edit: RawEvent): void => {
    const targetId = relationOf(edit.content).eventId;
    const target = targetId === null ? undefined : byId.get(targetId);
    if (target === undefined || target.sender !== edit.sender || edit.origin_server_ts > options.latestTimestamp) return;
    const previous = edits.get(target.event_id);
    if (previous === undefined || previous.origin_server_ts <= edit.origin_server_ts) edits.set(target.event_id, edit);
  };
  for (const event of byId.values()) {
    const bundled = bundledEdit(event);
    if (bundled !== null) consider(bundled);
  }
  for (const event of byId.values()) {
    if (isEdit(event)) consider(event);
    const target = redactedTarget(event);
    if (target !== null) redacted.add(target);
  }
  const turns = new Map<string, Turn>();
  for (const event of byId.values()) {
    if (event.type !== "m.room.message" || isEdit(event)) continue;
    const turn = redacted.has(event.event_id) ? redactedTurn(event, options) : normaliseMessage(event, options, edits.get(event.event_id) ?? null);
    if (turn !== null) turns.set(event.event_id, turn);
  }
  return turns;
}
