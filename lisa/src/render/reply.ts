import { cleanText, escapeHtml, singleLine, truncate } from "./text.ts";

// The rich-reply parts of every outgoing message: the quoted fallback in both formats, the relation that always targets
// the invoking event (inside its thread when there is one), and the mention
// of the invoker.

/** Longest quoted excerpt of the invoking message, in code points. */
export const REPLY_EXCERPT_MAX_CHARACTERS = 200;

/** The invoking event as the renderer needs it. */
export interface InvokingMessage {
  readonly eventId: string;
  readonly roomId: string;
  readonly sender: string;
  readonly body: string;
  /** Accepted for completeness; the excerpt is always taken from the plain body. */
  readonly formattedBody?: string | null;
}

/** The thread an answer belongs to. */
export interface ThreadTarget {
  readonly rootId: string;
}

/** Removes a leading plain-text reply fallback (`>` lines then a blank line). */
export function stripQuotedFallback(body: string): string {
  const lines = body.split("\n");
  let i = 0;
  while (i < lines.length && (lines[i] ?? "").startsWith(">")) i += 1;
  if (i === 0 || i >= lines.length || (lines[i] ?? "").trim() !== "") return body;
  return lines.slice(i + 1).join("\n");
}

function matrixTo(...parts: readonly string[]): string {
  return `https://matrix.to/#/${parts.map((p) => encodeURIComponent(p)).join("/")}`;
}

/** The bounded excerpt of the invoking message quoted in the fallback. */
export function replyExcerpt(invoking: InvokingMessage): string {
  const text = cleanText(stripQuotedFallback(cleanText(invoking.body))).trim();
  return truncate(text, REPLY_EXCERPT_MAX_CHARACTERS, "…");
}

/** Plain and HTML reply fallbacks, each ready to be prefixed to the answer. */
export function replyFallback(invoking: InvokingMessage): { readonly plain: string; readonly html: string } {
  const sender = singleLine(invoking.sender);
  const lines = replyExcerpt(invoking).split("\n");
  const quoted = lines.map((line, i) => (i === 0 ? `> <${sender}> ${line}` : `> ${line}`).trimEnd()).join("\n");
  const html =
    `<mx-reply><blockquote><a href="${escapeHtml(matrixTo(invoking.roomId, invoking.eventId))}">In reply to</a> ` +
    `<a href="${escapeHtml(matrixTo(invoking.sender))}">${escapeHtml(sender)}</a><br>` +
    `${lines.map(escapeHtml).join("<br>")}</blockquote></mx-reply>`;
  return { plain: `${quoted}\n\n`, html };
}

/** `m.relates_to` of an answer: a reply to the invocation, inside its thread when there is one. */
export function replyRelation(invoking: InvokingMessage, thread: ThreadTarget | null): Record<string, unknown> {
  const inReplyTo = { event_id: invoking.eventId };
  if (thread === null) return { "m.in_reply_to": inReplyTo };
  return { rel_type: "m.thread", event_id: thread.rootId, is_falling_back: false, "m.in_reply_to": inReplyTo };
}

/** `m.mentions` naming the invoker, so the answer notifies exactly them. */
export function replyMentions(invoking: InvokingMessage): Record<string, unknown> {
  return { user_ids: [invoking.sender] };
}
