import { defaultTreeAdapter, parseFragment, type DefaultTreeAdapterTypes } from "parse5";
import { cleanText } from "./text.ts";

// Converts Matrix `org.matrix.custom.html` into bounded Markdown-like text with
// a real HTML parser: the semantic subset (paragraphs, breaks, emphasis, code,
// quotes, lists, links, headings) survives; unknown tags keep only their text;
// scripts, styles, media, forms, reply fallbacks and every attribute except
// link targets and code languages disappear.

type Node = DefaultTreeAdapterTypes.ChildNode;
type Element = DefaultTreeAdapterTypes.Element;

// Elements dropped together with everything inside them.
const DROPPED = new Set([
  "script", "style", "noscript", "template", "head", "title", "meta", "link", "base",
  "iframe", "frame", "frameset", "object", "embed", "applet", "param",
  "img", "picture", "video", "audio", "source", "track", "svg", "math", "canvas", "map", "area",
  "form", "input", "button", "select", "option", "optgroup", "textarea", "datalist", "fieldset", "output",
  "mx-reply",
]);

// Elements that start their own block; any other element is transparent or inline.
const BLOCKS = new Set([
  "p", "div", "pre", "blockquote", "ul", "ol", "li", "hr", "table", "caption", "thead", "tbody", "tfoot", "tr",
  "h1", "h2", "h3", "h4", "h5", "h6", "details", "summary", "dl", "dt", "dd", "section", "article", "header",
  "footer", "nav", "aside", "main", "figure", "figcaption", "address",
]);

const LINK_SCHEMES = new Set(["http:", "https:", "matrix:", "mailto:"]);

function isElement(node: Node): node is Element {
  return "tagName" in node;
}

function attribute(element: Element, name: string): string | null {
  return element.attrs.find((a) => a.name === name)?.value ?? null;
}

/** Nesting depth below which structure is rendered; deeper subtrees become their text. */
export const MAX_HTML_DEPTH = 32;

/** Text content of a subtree (iterative, so hostile nesting cannot exhaust the stack). */
function rawText(root: Node): string {
  let out = "";
  const stack: Node[] = [root];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node.nodeName === "#text") out += (node as DefaultTreeAdapterTypes.TextNode).value;
    else if (!isElement(node) || DROPPED.has(node.tagName)) continue;
    else if (node.tagName === "br") out += "\n";
    else for (let i = node.childNodes.length - 1; i >= 0; i -= 1) stack.push(node.childNodes[i] as Node);
  }
  return out;
}

/** Replaces the children of every element at MAX_HTML_DEPTH with their plain text. */
function limitDepth(fragment: DefaultTreeAdapterTypes.DocumentFragment): void {
  const stack: [Node, number][] = fragment.childNodes.map((n) => [n, 1]);
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const [node, depth] = entry;
    if (!isElement(node) || DROPPED.has(node.tagName)) continue;
    if (depth < MAX_HTML_DEPTH) {
      for (const child of node.childNodes) stack.push([child, depth + 1]);
      continue;
    }
    const text = defaultTreeAdapter.createTextNode(rawText(node).replace(/\s+/g, " "));
    text.parentNode = node;
    node.childNodes = [text];
  }
}

function longestRun(text: string, char: string): number {
  let longest = 0;
  let current = 0;
  for (const c of text) {
    current = c === char ? current + 1 : 0;
    longest = Math.max(longest, current);
  }
  return longest;
}

/** Wraps inline text in a marker, keeping surrounding spaces outside the marker. */
function wrap(text: string, marker: string): string {
  const inner = text.trim();
  if (inner.length === 0) return text;
  const lead = text.startsWith(" ") ? " " : "";
  const trail = text.endsWith(" ") ? " " : "";
  return `${lead}${marker}${inner}${marker}${trail}`;
}

function inlineCode(element: Element): string {
  const text = rawText(element).replace(/\s+/g, " ");
  if (text.length === 0) return "";
  const fence = "`".repeat(longestRun(text, "`") + 1);
  const pad = text.startsWith("`") || text.endsWith("`") ? " " : "";
  return `${fence}${pad}${text}${pad}${fence}`;
}

function safeHref(href: string | null): string | null {
  if (href === null) return null;
  try {
    const url = new URL(href.trim());
    return LINK_SCHEMES.has(url.protocol) ? url.href.replace(/[()\s]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`) : null;
  } catch {
    return null;
  }
}

function link(element: Element): string {
  const label = inline(element.childNodes).replace(/\s+/g, " ").trim();
  const href = safeHref(attribute(element, "href"));
  if (href === null) return label;
  if (label.length === 0 || label === href) return href;
  return `[${label}](${href})`;
}

function inlineElement(element: Element): string {
  switch (element.tagName) {
    case "br": return "\n";
    case "em": case "i": return wrap(inline(element.childNodes), "*");
    case "strong": case "b": return wrap(inline(element.childNodes), "**");
    case "del": case "s": case "strike": return wrap(inline(element.childNodes), "~~");
    case "code": return inlineCode(element);
    case "a": return link(element);
    default: return inline(element.childNodes);
  }
}

/** Renders nodes as inline text; nested blocks become their own lines. */
function inline(nodes: readonly Node[]): string {
  let out = "";
  for (const node of nodes) {
    if (node.nodeName === "#text") out += (node as DefaultTreeAdapterTypes.TextNode).value.replace(/[ \t\n\f]+/g, " ");
    else if (!isElement(node) || DROPPED.has(node.tagName)) continue;
    else if (BLOCKS.has(node.tagName)) out += `\n${blocks(node.childNodes).join("\n")}\n`;
    else out += inlineElement(node);
  }
  return out;
}

/** Tidies accumulated inline text: trims each line and drops empty edges. */
function finishInline(text: string): string {
  return text
    .split("\n")
    .map((line) => line.replace(/ {2,}/g, " ").trim())
    .join("\n")
    .replace(/^\n+|\n+$/g, "");
}

function indent(text: string, first: string, rest: string): string {
  return text
    .split("\n")
    .map((line, i) => (i === 0 ? first + line : line.length > 0 ? rest + line : line))
    .join("\n");
}

function listBlock(element: Element): string {
  const ordered = element.tagName === "ol";
  let number = ordered ? Number.parseInt(attribute(element, "start") ?? "1", 10) : 0;
  if (!Number.isFinite(number)) number = 1;
  const items: string[] = [];
  for (const child of element.childNodes) {
    if (!isElement(child) || DROPPED.has(child.tagName)) continue;
    const content = (child.tagName === "li" ? blocks(child.childNodes) : blocks([child])).join("\n");
    const marker = ordered ? `${number}. ` : "- ";
    items.push(indent(content, marker, " ".repeat(marker.length)));
    number += 1;
  }
  return items.join("\n");
}

function preBlock(element: Element): string {
  const code = element.childNodes.find((n): n is Element => isElement(n) && n.tagName === "code");
  const language = /(?:^|\s)language-([A-Za-z0-9_+.#-]{1,32})(?:\s|$)/.exec(code === undefined ? "" : attribute(code, "class") ?? "")?.[1] ?? "";
  const text = rawText(element).replace(/\n$/, "");
  const fence = "`".repeat(Math.max(3, longestRun(text, "`") + 1));
  return `${fence}${language}\n${text}\n${fence}`;
}

function tableRow(element: Element): string {
  const cells = element.childNodes.filter(isElement).filter((c) => c.tagName === "td" || c.tagName === "th");
  return cells.map((cell) => finishInline(inline(cell.childNodes)).replace(/\n/g, " ")).join(" | ");
}

function blockElement(element: Element): string[] {
  const tag = element.tagName;
  if (/^h[1-6]$/.test(tag)) {
    const text = finishInline(inline(element.childNodes)).replace(/\n/g, " ");
    return text.length === 0 ? [] : [`${"#".repeat(Number(tag[1]))} ${text}`];
  }
  switch (tag) {
    case "hr": return ["---"];
    case "pre": return [preBlock(element)];
    case "ul": case "ol": return [listBlock(element)].filter((b) => b.length > 0);
    case "li": return [indent(blocks(element.childNodes).join("\n"), "- ", "  ")];
    case "tr": return [tableRow(element)].filter((b) => b.length > 0);
    case "blockquote": {
      const inner = blocks(element.childNodes).join("\n\n");
      return inner.length === 0 ? [] : [inner.split("\n").map((l) => (l.length > 0 ? `> ${l}` : ">")).join("\n")];
    }
    case "table": case "thead": case "tbody": case "tfoot": {
      const rows = blocks(element.childNodes);
      return rows.length === 0 ? [] : [rows.join("\n")];
    }
    default: return blocks(element.childNodes);
  }
}

/** Renders nodes in block context: a list of blocks separated by blank lines when joined. */
function blocks(nodes: readonly Node[]): string[] {
  const out: string[] = [];
  let pending = "";
  const flush = (): void => {
    const text = finishInline(pending);
    if (text.length > 0) out.push(text);
    pending = "";
  };
  for (const node of nodes) {
    if (isElement(node) && BLOCKS.has(node.tagName) && !DROPPED.has(node.tagName)) {
      flush();
      out.push(...blockElement(node));
    } else {
      pending += inline([node]);
    }
  }
  flush();
  return out;
}

/** Converts a Matrix HTML `formatted_body` into Markdown-like plain text. */
export function htmlToText(html: string): string {
  const fragment = parseFragment(cleanText(html));
  limitDepth(fragment);
  return blocks(fragment.childNodes).join("\n\n").trim();
}
