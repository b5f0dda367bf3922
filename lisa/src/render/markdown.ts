import MarkdownIt from "markdown-it";
import type { Token } from "markdown-it";
import { safeLink } from "./links.ts";
import { escapeHtml } from "./text.ts";

// Model text is untrusted Markdown. Raw HTML is disabled, so any
// tag the model writes stays text. Linkify is off: Matrix clients linkify bare
// URLs themselves, and Lisa never turns a bare domain into a link it did not
// mean. Soft line breaks render as <br>, as in Matrix composers.

const md = new MarkdownIt("default", { html: false, linkify: false, typographer: false, breaks: true });
// Every link is parsed, so the single link policy below (not markdown-it's
// built-in blocklist) decides; unsafe targets keep their label as plain text.
md.validateLink = () => true;

md.renderer.rules.image = (tokens, index) => {
  const token = tokens[index];
  if (token === undefined) return "";
  const alt = escapeHtml(token.content);
  const src = safeLink(String(token.attrGet("src") ?? ""));
  return src === null ? alt : `<a href="${escapeHtml(src)}">${alt.length > 0 ? alt : escapeHtml(src)}</a>`;
};

function neutraliseLinks(children: Token[]): Token[] {
  const stack: boolean[] = [];
  return children.filter((token) => {
    if (token.type === "link_open") {
      const target = safeLink(String(token.attrGet("href") ?? ""));
      if (target !== null) token.attrSet("href", target);
      stack.push(target !== null);
      return target !== null;
    }
    if (token.type === "link_close") return stack.pop() === true;
    return true;
  });
}

/** Parses Markdown and removes links whose targets the link policy rejects (labels stay). */
export function parseMarkdown(markdown: string): Token[] {
  const tokens = md.parse(markdown, {});
  for (const token of tokens) {
    if (token.type === "inline" && token.children !== null) token.children = neutraliseLinks(token.children);
  }
  return tokens;
}

/** Renders parsed tokens to (not yet sanitized) HTML. */
export function tokensToHtml(tokens: Token[]): string {
  return md.renderer.render(tokens, md.options, {});
}
