import type { JsonObject } from "./http.ts";
import type { TimelineEvent } from "./timeline.ts";

/** `m.mentions` as sent by current clients (an empty object means "mentions nobody"). */
export interface Mentions {
  user_ids?: string[];
  room?: boolean;
}

/** Message types a human member sends. */
export type MessageType = "m.text" | "m.notice" | "m.emote";

/** Escapes text for inclusion in `formatted_body`. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

/** A matrix.to permalink to a user, room or event, unencoded as Element writes it (`https://matrix.to/#/@u:hs`). */
export function permalink(...parts: string[]): string {
  return `https://matrix.to/#/${parts.join("/")}`;
}

/** Plain-text message content; `mentions` adds `m.mentions` (omitted entirely when undefined, like legacy clients). */
export function textContent(body: string, options: { msgtype?: MessageType; mentions?: Mentions } = {}): JsonObject {
  const content: JsonObject = { msgtype: options.msgtype ?? "m.text", body };
  if (options.mentions !== undefined) content["m.mentions"] = options.mentions;
  return content;
}

/** HTML message content (`format: org.matrix.custom.html`) with its plain-text `body`. */
export function htmlContent(
  body: string,
  formattedBody: string,
  options: { msgtype?: MessageType; mentions?: Mentions } = {},
): JsonObject {
  return { ...textContent(body, options), format: "org.matrix.custom.html", formatted_body: formattedBody };
}

/** A structured mention as Element sends it: a user pill in HTML plus `m.mentions.user_ids`. */
export function mentionContent(userId: string, displayName: string, text: string): JsonObject {
  const pill = `<a href="${permalink(userId)}">${escapeHtml(displayName)}</a>`;
  return htmlContent(`${displayName}: ${text}`, `${pill}: ${escapeHtml(text)}`, { mentions: { user_ids: [userId] } });
}

function stringField(content: Record<string, unknown>, key: string): string | undefined {
  const value = content[key];
  return typeof value === "string" ? value : undefined;
}

/** `body` without a leading reply fallback (`> ` quote lines and the blank line after them). */
export function withoutReplyFallback(body: string): string {
  const lines = body.split("\n");
  let index = 0;
  while (index < lines.length && lines[index]?.startsWith("> ")) index += 1;
  if (index > 0 && lines[index] === "") index += 1;
  return lines.slice(index).join("\n");
}

function withoutMxReply(html: string): string {
  const end = html.indexOf("</mx-reply>");
  return html.startsWith("<mx-reply>") && end >= 0 ? html.slice(end + "</mx-reply>".length) : html;
}

/** Options of a rich reply. */
export interface ReplyOptions {
  /** HTML of the reply itself (default: the escaped body). */
  formattedBody?: string;
  /** Include the legacy reply fallback in body and formatted_body (default true). */
  fallback?: boolean;
  /** `m.mentions` of the reply (default: the parent's sender, as Element does). */
  mentions?: Mentions;
}

/** A rich reply: `m.relates_to.m.in_reply_to` plus (by default) the quoted fallback. */
export function replyContent(roomId: string, parent: TimelineEvent, body: string, options: ReplyOptions = {}): JsonObject {
  const replyHtml = options.formattedBody ?? escapeHtml(body);
  const mentions = options.mentions ?? { user_ids: [parent.sender] };
  const relatesTo = { "m.in_reply_to": { event_id: parent.event_id } };
  if (options.fallback === false) {
    return { ...htmlContent(body, replyHtml, { mentions }), "m.relates_to": relatesTo };
  }
  // A parent that is itself a reply carries its own fallback; quote only its own text.
  const parentBody = withoutReplyFallback(stringField(parent.content, "body") ?? "");
  const [firstLine = "", ...rest] = parentBody.split("\n");
  const quoted = [`> <${parent.sender}> ${firstLine}`, ...rest.map((line) => `> ${line}`)].join("\n");
  const parentFormatted =
    stringField(parent.content, "format") === "org.matrix.custom.html"
      ? withoutMxReply(stringField(parent.content, "formatted_body") ?? "")
      : escapeHtml(parentBody).replace(/\n/g, "<br />");
  const mxReply =
    `<mx-reply><blockquote><a href="${permalink(roomId, parent.event_id)}">In reply to</a> ` +
    `<a href="${permalink(parent.sender)}">${escapeHtml(parent.sender)}</a><br />${parentFormatted}</blockquote></mx-reply>`;
  return { ...htmlContent(`${quoted}\n\n${body}`, `${mxReply}${replyHtml}`, { mentions }), "m.relates_to": relatesTo };
}

/** Options of a thread message. */
export interface ThreadOptions {
  /** The newest event in the thread, used for the fallback `m.in_reply_to` (default: the root). */
  latestEventId?: string;
  /** Make it a real reply to this event inside the thread (`is_falling_back: false`). */
  replyTo?: string;
  mentions?: Mentions;
  formattedBody?: string;
}

/** A thread message: `rel_type: m.thread` with the reply fallback for thread-unaware clients. */
export function threadContent(rootId: string, body: string, options: ThreadOptions = {}): JsonObject {
  const base =
    options.formattedBody === undefined
      ? textContent(body, { mentions: options.mentions ?? {} })
      : htmlContent(body, options.formattedBody, { mentions: options.mentions ?? {} });
  return {
    ...base,
    "m.relates_to": {
      rel_type: "m.thread",
      event_id: rootId,
      is_falling_back: options.replyTo === undefined,
      "m.in_reply_to": { event_id: options.replyTo ?? options.latestEventId ?? rootId },
    },
  };
}

/** An edit: `m.replace` relation, `* `-prefixed fallback body and the replacement in `m.new_content`. */
export function editContent(
  originalEventId: string,
  newBody: string,
  options: { formattedBody?: string; mentions?: Mentions; msgtype?: MessageType } = {},
): JsonObject {
  const newContent =
    options.formattedBody === undefined
      ? textContent(newBody, { msgtype: options.msgtype, mentions: options.mentions })
      : htmlContent(newBody, options.formattedBody, { msgtype: options.msgtype, mentions: options.mentions });
  const fallback =
    options.formattedBody === undefined
      ? textContent(`* ${newBody}`, { msgtype: options.msgtype })
      : htmlContent(`* ${newBody}`, `* ${options.formattedBody}`, { msgtype: options.msgtype });
  return { ...fallback, "m.new_content": newContent, "m.relates_to": { rel_type: "m.replace", event_id: originalEventId } };
}

/** A reaction (`m.reaction` annotation) with the given key, e.g. an emoji. */
export function reactionContent(eventId: string, key: string): JsonObject {
  return { "m.relates_to": { rel_type: "m.annotation", event_id: eventId, key } };
}
