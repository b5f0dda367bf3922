// Shared inputs for render tests.
import { renderReply, type ReplyInput } from "../../../src/render/render.ts";
import type { InvokingMessage } from "../../../src/render/reply.ts";

export const INVOKING: InvokingMessage = {
  eventId: "$invocation:example.test",
  roomId: "!room:example.test",
  sender: "@alice:example.test",
  body: "@Lisa what do you think?",
};

/** Renders `markdown` with defaults for everything else. */
export function render(markdown: string, overrides: Partial<ReplyInput> = {}): Record<string, unknown> {
  return renderReply({ markdown, sources: [], invoking: INVOKING, thread: null, maxCharacters: 12_000, ...overrides });
}

/** The answer part of `body`, after the reply fallback's blank line. */
export function answerBody(content: Record<string, unknown>): string {
  const body = String(content["body"]);
  return body.slice(body.indexOf("\n\n") + 2);
}

/** The answer part of `formatted_body`, after `</mx-reply>`. */
export function answerHtml(content: Record<string, unknown>): string {
  const html = String(content["formatted_body"]);
  return html.slice(html.indexOf("</mx-reply>") + "</mx-reply>".length);
}
