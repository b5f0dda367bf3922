// Message contents of a streaming reply: the partial answer (a preview under
// the rules of partial.ts, with an optional status line such as "searching
// the web…"), and the `m.replace` edit that carries any content into the
// message the answer grows in.
import { parseMarkdown, tokensToHtml } from "./markdown.ts";
import { partialPreview } from "./partial.ts";
import { tokensToPlain } from "./plain.ts";
import { replyFallback, replyMentions, replyRelation, stripQuotedFallback, type InvokingMessage, type ThreadTarget } from "./reply.ts";
import { sanitizeMatrixHtml } from "./sanitize.ts";
import { cleanText, escapeHtml, truncate } from "./text.ts";

/** Longest partial preview, in code points (the final answer has its own, larger cap). */
export const MAX_PARTIAL_CHARACTERS = 8_000;
/** Longest plain fallback text of an edit (clients without edits show it as "* …"). */
export const EDIT_FALLBACK_CHARACTERS = 1_000;

/** What a streaming reply shows before it is final. */
export interface PartialInput {
  /** The answer's Markdown so far (untrusted, unvalidated). */
  readonly markdown: string;
  /** What she is doing, shown under the text (e.g. "searching the web…"); null for none. */
  readonly status: string | null;
  readonly invoking: InvokingMessage;
  readonly thread: ThreadTarget | null;
}

/** The partial message content: a rich reply like the final one, mentioning no one beyond it. */
export function renderPartial(input: PartialInput): Record<string, unknown> {
  const preview = truncate(cleanText(partialPreview(input.markdown)), MAX_PARTIAL_CHARACTERS, "…");
  const tokens = parseMarkdown(preview);
  const plain = [tokensToPlain(tokens), input.status === null ? "" : input.status].filter((p) => p.length > 0).join("\n\n");
  // The status sits in <code> so no client linkifies a host name in it.
  const status = input.status === null ? "" : `<p><em><code>${escapeHtml(input.status)}</code></em></p>`;
  const html = sanitizeMatrixHtml(tokensToHtml(tokens) + status);
  const fallback = replyFallback(input.invoking);
  return {
    msgtype: "m.text",
    body: fallback.plain + plain,
    format: "org.matrix.custom.html",
    formatted_body: fallback.html + html,
    "m.relates_to": replyRelation(input.invoking, input.thread),
    "m.mentions": replyMentions(input.invoking),
  };
}

const MX_REPLY = /^<mx-reply>[\s\S]*?<\/mx-reply>/;

/**
 * The `m.replace` edit of `targetEventId` to `content`: `m.new_content` is
 * the content without its relation (a reply's relation is not editable); the
 * outer fallback is short and plain, and its `m.mentions` is empty (nobody
 * is newly mentioned by an edit: the first send already mentioned the
 * invoker, and `m.new_content` carries the full mentions).
 */
export function renderEdit(targetEventId: string, content: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { "m.relates_to": _relation, ...newContent } = content;
  const body = typeof content["body"] === "string" ? stripQuotedFallback(content["body"]) : "";
  const formatted = typeof content["formatted_body"] === "string" ? content["formatted_body"].replace(MX_REPLY, "") : null;
  const short = truncate(body, EDIT_FALLBACK_CHARACTERS, "…");
  const edit: Record<string, unknown> = {
    msgtype: content["msgtype"] ?? "m.text",
    body: `* ${short}`,
    "m.new_content": newContent,
    "m.relates_to": { rel_type: "m.replace", event_id: targetEventId },
    "m.mentions": {},
  };
  // The HTML fallback only when the edit stays small (the new content already carries it).
  if (formatted !== null && short === body && formatted.length <= EDIT_FALLBACK_CHARACTERS * 4) {
    edit["format"] = "org.matrix.custom.html";
    edit["formatted_body"] = `* ${formatted}`;
  }
  return edit;
}
