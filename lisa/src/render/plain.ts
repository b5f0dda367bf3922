import type { Token } from "markdown-it";
import { safeLink } from "./links.ts";

// The plain `body` is built from the parsed token stream,
// never by stripping HTML: paragraphs, headings, quotes, lists, code and
// tables keep their layout; emphasis markers are dropped; links read
// "label (target)".

function fenceFor(text: string): string {
  let longest = 0;
  for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  return "`".repeat(Math.max(3, longest + 1));
}

function inlineCode(text: string): string {
  let longest = 0;
  for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  const fence = "`".repeat(longest + 1);
  const pad = text.startsWith("`") || text.endsWith("`") ? " " : "";
  return `${fence}${pad}${text}${pad}${fence}`;
}

function inlineText(children: readonly Token[] | null): string {
  let out = "";
  const links: { href: string; start: number }[] = [];
  for (const token of children ?? []) {
    switch (token.type) {
      case "text": out += token.content; break;
      case "code_inline": out += inlineCode(token.content); break;
      case "softbreak": case "hardbreak": out += "\n"; break;
      case "image": {
        const src = safeLink(String(token.attrGet("src") ?? ""));
        const alt = token.content.length > 0 ? token.content : "image";
        out += src === null ? alt : `${alt} (${src})`;
        break;
      }
      case "link_open": links.push({ href: String(token.attrGet("href") ?? ""), start: out.length }); break;
      case "link_close": {
        const link = links.pop();
        if (link === undefined) break;
        const label = out.slice(link.start);
        if (label.trim() !== link.href && link.href.length > 0) out += ` (${link.href})`;
        break;
      }
      default: break;
    }
  }
  return out;
}

/** Index just after the token that closes the block opened at `start`. */
function closing(tokens: readonly Token[], start: number): number {
  let depth = 0;
  for (let i = start; i < tokens.length; i += 1) {
    depth += tokens[i]?.nesting ?? 0;
    if (depth === 0) return i + 1;
  }
  return tokens.length;
}

function indent(text: string, first: string, rest: string): string {
  return text.split("\n").map((line, i) => (i === 0 ? first + line : line.length > 0 ? rest + line : line)).join("\n");
}

function list(tokens: readonly Token[], open: Token): string {
  const ordered = open.type === "ordered_list_open";
  let number = ordered ? Number(open.attrGet("start") ?? 1) : 0;
  if (!Number.isFinite(number)) number = 1;
  const items: string[] = [];
  let i = 0;
  while (i < tokens.length) {
    const end = closing(tokens, i);
    const parts = blocks(tokens.slice(i + 1, end - 1));
    const tight = tokens.slice(i + 1, end - 1).some((t) => t.type === "paragraph_open" && t.hidden);
    const marker = ordered ? `${number}. ` : "- ";
    items.push(indent(parts.join(tight ? "\n" : "\n\n"), marker, " ".repeat(marker.length)));
    number += 1;
    i = end;
  }
  return items.join("\n");
}

function tableRows(tokens: readonly Token[]): string {
  const rows: string[] = [];
  let cells: string[] = [];
  for (const token of tokens) {
    if (token.type === "tr_open") cells = [];
    else if (token.type === "inline") cells.push(inlineText(token.children).replace(/\n/g, " "));
    else if (token.type === "tr_close") rows.push(cells.join(" | "));
  }
  return rows.join("\n");
}

function block(tokens: readonly Token[], open: Token): string {
  const inner = tokens.slice(1, -1);
  switch (open.type) {
    case "paragraph_open": case "heading_open": return inlineText(inner[0]?.children ?? null);
    case "blockquote_open": return blocks(inner).join("\n\n").split("\n").map((l) => (l.length > 0 ? `> ${l}` : ">")).join("\n");
    case "bullet_list_open": case "ordered_list_open": return list(inner, open);
    case "table_open": return tableRows(inner);
    default: return blocks(inner).join("\n\n");
  }
}

/** Renders block tokens as plain-text blocks (to be joined by blank lines). */
function blocks(tokens: readonly Token[]): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < tokens.length) {
    const token = tokens[i];
    if (token === undefined) break;
    if (token.nesting === 1) {
      const end = closing(tokens, i);
      out.push(block(tokens.slice(i, end), token));
      i = end;
      continue;
    }
    if (token.type === "fence" || token.type === "code_block") {
      const code = token.content.replace(/\n$/, "");
      const fence = fenceFor(code);
      out.push(`${fence}${token.info.trim().split(/\s/)[0] ?? ""}\n${code}\n${fence}`);
    } else if (token.type === "hr") out.push("---");
    else if (token.type === "inline") out.push(inlineText(token.children));
    i += 1;
  }
  return out.filter((text) => text.length > 0);
}

/** Plain-text rendering of a parsed Markdown token stream. */
export function tokensToPlain(tokens: readonly Token[]): string {
  return blocks(tokens).join("\n\n").trim();
}
