import sanitizeHtml from "sanitize-html";
import { ANSWER_LINK_SCHEMES } from "./links.ts";

// Allowlist of the HTML subset Matrix clients accept in `formatted_body`,
// without images. `s` is the newer name of `strike`; both are kept. Unknown tags are discarded keeping their text; script/style and other
// non-text tags are dropped with their content.

/** Tags Lisa may emit in `formatted_body`. */
export const MATRIX_ALLOWED_TAGS: readonly string[] = [
  "font", "del", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "p", "a", "ul", "ol", "sup", "sub", "li",
  "b", "i", "u", "strong", "em", "strike", "s", "code", "hr", "br", "div", "table", "thead", "tbody", "tr",
  "th", "td", "caption", "pre", "span", "details", "summary",
];

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [...MATRIX_ALLOWED_TAGS],
  allowedAttributes: {
    font: ["data-mx-bg-color", "data-mx-color", "color"],
    span: ["data-mx-bg-color", "data-mx-color", "data-mx-spoiler"],
    a: ["href"],
    ol: ["start"],
    code: ["class"],
  },
  allowedClasses: { code: [/^language-[A-Za-z0-9_+#.-]{1,40}$/] },
  allowedSchemes: [...ANSWER_LINK_SCHEMES],
  allowedSchemesByTag: {},
  allowedSchemesAppliedToAttributes: ["href"],
  allowProtocolRelative: false,
  disallowedTagsMode: "discard",
  nonTextTags: ["script", "style", "textarea", "option", "noscript", "title", "iframe", "object", "embed", "svg", "math", "template"],
  enforceHtmlBoundary: false,
  parseStyleAttributes: false,
};

/** Sanitizes HTML to Matrix's permitted subset with only http, https and matrix links. */
export function sanitizeMatrixHtml(html: string): string {
  return sanitizeHtml(html, OPTIONS);
}
