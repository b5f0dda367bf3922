import { parseMarkdown, tokensToHtml } from "./markdown.ts";
import { tokensToPlain } from "./plain.ts";
import { replyFallback, replyMentions, replyRelation, type InvokingMessage, type ThreadTarget } from "./reply.ts";
import { sanitizeMatrixHtml } from "./sanitize.ts";
import { renderSources, type SourceInput } from "./sources.ts";
import { cleanText, countChars, escapeHtml, truncate } from "./text.ts";

// Builds the complete `m.room.message` content of an answer. The
// payload is persisted and later sent verbatim, so it is bounded here: the
// Markdown is capped at the response limit and, if the rendered event would
// still be too large, cut further before rendering again.

/** Hard ceiling on answer Markdown, whatever the configured response limit. */
export const HARD_MAX_ANSWER_CHARACTERS = 60_000;
/** Hard ceiling on the serialized content (Matrix events are limited to 65536 bytes in total). */
export const MAX_CONTENT_BYTES = 48_000;
/** Longest in-character error text sent. */
export const MAX_FALLBACK_CHARACTERS = 2_000;
/** Marker appended to an answer cut to fit. */
export const ANSWER_TRUNCATION_MARKER = "\n\n[…]";

const MAX_SHRINK_ATTEMPTS = 10;

/** Inputs of an answer message. */
export interface ReplyInput {
  /** The model's final Markdown (untrusted). */
  readonly markdown: string;
  /** Sources from the registry, in first-use order. */
  readonly sources: readonly SourceInput[];
  readonly invoking: InvokingMessage;
  readonly thread: ThreadTarget | null;
  /** Configured response limit in code points (clamped to the hard ceiling). */
  readonly maxCharacters: number;
}

/** Inputs of the configured in-character error message. */
export interface FallbackInput {
  readonly text: string;
  readonly invoking: InvokingMessage;
  readonly thread: ThreadTarget | null;
}

function contentBytes(content: Record<string, unknown>): number {
  return Buffer.byteLength(JSON.stringify(content), "utf8");
}

function envelope(invoking: InvokingMessage, thread: ThreadTarget | null, plain: string, html: string): Record<string, unknown> {
  const fallback = replyFallback(invoking);
  return {
    msgtype: "m.text",
    body: fallback.plain + plain,
    format: "org.matrix.custom.html",
    formatted_body: fallback.html + html,
    "m.relates_to": replyRelation(invoking, thread),
    "m.mentions": replyMentions(invoking),
  };
}

function compose(markdown: string, input: ReplyInput): Record<string, unknown> {
  const tokens = parseMarkdown(markdown);
  const sources = renderSources(input.sources);
  const plainParts = [tokensToPlain(tokens), sources?.plain ?? ""].filter((p) => p.length > 0);
  const html = sanitizeMatrixHtml(tokensToHtml(tokens) + (sources?.html ?? ""));
  return envelope(input.invoking, input.thread, plainParts.join("\n\n"), html);
}

/**
 * Renders an answer as complete `m.room.message` content: sanitized Matrix
 * HTML and a token-built plain body, the rich-reply fallback, sources, the
 * reply (and thread) relation and the invoker's mention. Never exceeds
 * `MAX_CONTENT_BYTES` when serialized.
 */
export function renderReply(input: ReplyInput): Record<string, unknown> {
  const limit = Math.max(1, Math.min(Math.floor(input.maxCharacters), HARD_MAX_ANSWER_CHARACTERS));
  let markdown = truncate(cleanText(input.markdown), limit, ANSWER_TRUNCATION_MARKER);
  for (let attempt = 0; attempt < MAX_SHRINK_ATTEMPTS; attempt += 1) {
    const content = compose(markdown, input);
    const bytes = contentBytes(content);
    if (bytes <= MAX_CONTENT_BYTES) return content;
    const length = countChars(markdown);
    const target = Math.floor((length * MAX_CONTENT_BYTES * 0.9) / bytes);
    markdown = truncate(markdown, Math.min(target, length - 1), ANSWER_TRUNCATION_MARKER);
  }
  return compose(ANSWER_TRUNCATION_MARKER.trim(), { ...input, sources: [] });
}

/** Renders the configured in-character error as plain, escaped reply content. */
export function renderFallback(input: FallbackInput): Record<string, unknown> {
  const text = truncate(cleanText(input.text).trim(), MAX_FALLBACK_CHARACTERS, "…");
  const html = `<p>${text.split("\n").map(escapeHtml).join("<br>")}</p>`;
  return envelope(input.invoking, input.thread, text, html);
}
