import { parse, type DefaultTreeAdapterMap } from "parse5";
import { boundedLabel } from "./text.ts";

type ParentNode = DefaultTreeAdapterMap["parentNode"];
type Element = DefaultTreeAdapterMap["element"];

const HTML_NAMESPACE = "http://www.w3.org/1999/xhtml";
/** Longest page title kept, in UTF-16 code units. */
export const TITLE_MAX_CHARACTERS = 200;
// The title lives in the head; parsing a bounded prefix keeps the work bounded.
const TITLE_SCAN_CHARACTERS = 512_000;
const CHARSET_PRESCAN_BYTES = 1_024;
const MAX_VISITED_NODES = 50_000;

/** True when `label` is an encoding TextDecoder knows. */
function isKnownEncoding(label: string): boolean {
  try {
    new TextDecoder(label);
    return true;
  } catch {
    return false;
  }
}

/** Decodes bytes with the given charset label, falling back to UTF-8 for unknown labels; never throws. */
export function decodeText(bytes: Uint8Array, charset: string | null): string {
  const label = charset !== null && isKnownEncoding(charset) ? charset : "utf-8";
  return new TextDecoder(label, { fatal: false }).decode(bytes);
}

function bomEncoding(bytes: Uint8Array): string | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return "utf-8";
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return "utf-16be";
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return "utf-16le";
  return null;
}

function* elements(root: ParentNode): Generator<Element> {
  const stack: ParentNode[] = [root];
  let visited = 0;
  while (stack.length > 0 && visited < MAX_VISITED_NODES) {
    const node = stack.pop();
    if (node === undefined) break;
    visited += 1;
    if ("tagName" in node) yield node;
    const children = "content" in node ? node.content.childNodes : node.childNodes;
    for (let i = children.length - 1; i >= 0; i -= 1) {
      const child = children[i];
      if (child !== undefined && "childNodes" in child) stack.push(child);
    }
  }
}

function attribute(element: Element, name: string): string | null {
  return element.attrs.find((attr) => attr.name === name)?.value ?? null;
}

function metaCharset(bytes: Uint8Array): string | null {
  // windows-1252 maps every byte, so the ASCII-compatible prescan sees the markup.
  const prefix = new TextDecoder("windows-1252").decode(bytes.subarray(0, CHARSET_PRESCAN_BYTES));
  for (const element of elements(parse(prefix))) {
    if (element.tagName !== "meta") continue;
    const direct = attribute(element, "charset");
    if (direct !== null) return direct.trim();
    if (attribute(element, "http-equiv")?.trim().toLowerCase() === "content-type") {
      const content = attribute(element, "content") ?? "";
      const match = /charset\s*=\s*["']?([^"';\s]+)/i.exec(content);
      if (match?.[1] !== undefined) return match[1];
    }
  }
  return null;
}

/** The HTML page's encoding: transport charset, then BOM, then a `<meta>` prescan, else UTF-8. */
export function detectHtmlCharset(bytes: Uint8Array, transportCharset: string | null): string {
  const bom = bomEncoding(bytes);
  if (bom !== null) return bom; // a BOM wins over the header, as in browsers
  if (transportCharset !== null && isKnownEncoding(transportCharset)) return transportCharset.toLowerCase();
  const declared = metaCharset(bytes);
  if (declared !== null && isKnownEncoding(declared)) {
    // A page can only declare an ASCII-compatible encoding from inside itself.
    return declared.toLowerCase().startsWith("utf-16") ? "utf-8" : declared.toLowerCase();
  }
  return "utf-8";
}

/** The document's HTML `<title>`, whitespace-collapsed and bounded, or null. */
export function extractHtmlTitle(html: string): string | null {
  const document = parse(html.slice(0, TITLE_SCAN_CHARACTERS));
  for (const element of elements(document)) {
    if (element.tagName !== "title" || element.namespaceURI !== HTML_NAMESPACE) continue;
    const text = element.childNodes.map((child) => ("value" in child && child.nodeName === "#text" ? child.value : "")).join("");
    return boundedLabel(text, TITLE_MAX_CHARACTERS);
  }
  return null;
}
