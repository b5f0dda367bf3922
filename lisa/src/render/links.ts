// The one link policy shared by the HTML and plain renderers and the sanitizer.

/** Schemes permitted in ordinary answer links. */
export const ANSWER_LINK_SCHEMES: readonly string[] = ["http", "https", "matrix"];

/** Longest link target kept, in characters. */
export const MAX_LINK_LENGTH = 2_048;

/**
 * Returns the normalised link target when it is a well-formed absolute URL
 * with an allowed scheme, else null (the caller keeps only the label).
 */
export function safeLink(href: string, schemes: readonly string[] = ANSWER_LINK_SCHEMES): string | null {
  if (href.length === 0 || href.length > MAX_LINK_LENGTH) return null;
  let url: URL;
  try {
    url = new URL(href.trim());
  } catch {
    return null;
  }
  if (!schemes.includes(url.protocol.slice(0, -1))) return null;
  if ((url.protocol === "http:" || url.protocol === "https:") && url.hostname.length === 0) return null;
  return url.href;
}
