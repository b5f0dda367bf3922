import { safeLink } from "./links.ts";
import { escapeHtml, singleLine, truncate } from "./text.ts";

// The host-generated sources section, appended in both formats.
// URLs come only from the caller's source registry; only http(s) survive.
// Duplicates (ignoring fragments) collapse in first-use order; count and
// title lengths are capped so citations cannot bypass the response bound.

/** Most sources listed. */
export const MAX_SOURCES = 8;
/** Longest single source title, in code points. */
export const MAX_SOURCE_TITLE_CHARACTERS = 120;
/** Longest source URL kept; longer ones are skipped. */
export const MAX_SOURCE_URL_LENGTH = 1_024;
/** Longest combined source titles, in code points. */
export const MAX_SOURCE_TITLES_TOTAL = 600;

/** One cited source. */
export interface SourceInput {
  readonly url: string;
  readonly title: string | null;
}

/** The sources section in both formats. */
export interface RenderedSources {
  readonly plain: string;
  readonly html: string;
}

interface Entry {
  readonly url: string;
  readonly title: string;
}

function dedupe(sources: readonly SourceInput[]): Entry[] {
  const seen = new Set<string>();
  const entries: Entry[] = [];
  let titleBudget = MAX_SOURCE_TITLES_TOTAL;
  for (const source of sources) {
    if (entries.length >= MAX_SOURCES) break;
    const url = safeLink(source.url, ["http", "https"]);
    if (url === null || url.length > MAX_SOURCE_URL_LENGTH) continue;
    const key = url.replace(/#.*$/, "");
    if (seen.has(key)) continue;
    seen.add(key);
    const raw = singleLine(source.title ?? "");
    const fallback = new URL(url).hostname;
    const limit = Math.min(MAX_SOURCE_TITLE_CHARACTERS, titleBudget);
    const title = raw.length > 0 && limit >= 8 ? truncate(raw, limit, "…") : fallback;
    titleBudget = Math.max(0, titleBudget - [...title].length);
    entries.push({ url, title });
  }
  return entries;
}

/** Escapes Markdown link-label syntax so a title cannot end the label or add formatting. */
function escapeMarkdownLabel(text: string): string {
  return text.replace(/[\\[\]()*_`<>#!~|]/g, (c) => `\\${c}`);
}

/** Percent-encodes characters that would end or break a Markdown link target. */
function markdownTarget(url: string): string {
  return url.replace(/[()<>\s]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`);
}

/** Renders the sources section, or null when no valid source remains. */
export function renderSources(sources: readonly SourceInput[]): RenderedSources | null {
  const entries = dedupe(sources);
  if (entries.length === 0) return null;
  const plain = ["Sources:", "", ...entries.map((e) => `- [${escapeMarkdownLabel(e.title)}](${markdownTarget(e.url)})`)].join("\n");
  const items = entries.map((e) => `<li><a href="${escapeHtml(e.url)}">${escapeHtml(e.title)}</a></li>`).join("\n");
  return { plain, html: `<p>Sources:</p>\n<ul>\n${items}\n</ul>\n` };
}
