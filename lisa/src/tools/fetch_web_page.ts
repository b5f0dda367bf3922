import * as v from "valibot";
import type { WebConfig } from "../config/types.ts";
import { err, ok } from "../errors.ts";
import type { WebFetcher } from "../web/fetch.ts";
import { normalizeSourceUrl, validateWebUrl } from "../web/url.ts";
import type { ArtifactStore } from "./artifacts.ts";
import { textArgument } from "./arguments.ts";
import { fromLowerLayer, toolFailure } from "./failures.ts";
import { decodeText, detectHtmlCharset, extractHtmlTitle } from "./html.ts";
import { cleanText } from "./text.ts";
import { defineTool, type Tool, type ToolOutcome } from "./tool.ts";

/** The narrow port to the bounded web fetcher. */
export type FetchPage = WebFetcher["fetch"];

/** Longest URL argument accepted, in code points. */
export const URL_ARGUMENT_MAX_CHARACTERS = 2_048;
// Time for storing and title parsing on top of the fetcher's own total deadline.
const DEADLINE_GRACE_MS = 2_000;

const HTML_TYPES = new Set(["text/html", "application/xhtml+xml"]);
const TEXT_TYPES = new Set(["text/plain", "text/markdown", "text/x-markdown"]);

const definition = {
  name: "fetch_web_page",
  description:
    "Download one web page over HTTP or HTTPS (size, redirect and time limits apply). For an HTML page this " +
    "returns only metadata with an artifact_id: call html_to_markdown with that artifact_id to read the page. " +
    "A plain-text page is returned directly. Cite the returned final_url as a source.",
  parameters: {
    type: "object",
    properties: {
      url: { type: "string", minLength: 1, maxLength: URL_ARGUMENT_MAX_CHARACTERS, description: "Absolute http or https URL." },
    },
    required: ["url"],
    additionalProperties: false,
  },
} as const;

const schema = v.strictObject({ url: textArgument({ min: 1, max: URL_ARGUMENT_MAX_CHARACTERS }) });

/** Media type of a Content-Type value, lower-cased, without parameters. */
export function mediaType(contentType: string): string {
  return (contentType.split(";")[0] ?? "").trim().toLowerCase();
}

interface StoredPage {
  readonly finalUrl: string;
  readonly mime: string;
  readonly charset: string | null;
  readonly bytes: Uint8Array;
}

// The metadata the model sees for a stored page (and may use to cite it).
function pageMetadata(artifactId: string, page: StoredPage, title: string | null) {
  return { artifact_id: artifactId, final_url: page.finalUrl, content_type: page.mime, byte_count: page.bytes.byteLength, title };
}

function htmlOutcome(page: StoredPage, artifacts: ArtifactStore): ToolOutcome {
  const charset = detectHtmlCharset(page.bytes, page.charset);
  const title = extractHtmlTitle(decodeText(page.bytes, charset));
  const stored = artifacts.add({
    kind: "html", contentType: "text/html", charset, bytes: page.bytes, sourceUrl: page.finalUrl, title,
  });
  if (!stored.ok) return stored;
  const metadata = pageMetadata(stored.value.id, page, title);
  return ok({ data: JSON.stringify(metadata), metadata, sources: [{ url: page.finalUrl, title }], material: true });
}

function textOutcome(page: StoredPage, artifacts: ArtifactStore): ToolOutcome {
  const charset = page.charset !== null ? page.charset.toLowerCase() : "utf-8";
  const stored = artifacts.add({
    kind: "text", contentType: page.mime, charset, bytes: page.bytes, sourceUrl: page.finalUrl, title: null,
  });
  if (!stored.ok) return stored;
  const metadata = pageMetadata(stored.value.id, page, null);
  const text = cleanText(decodeText(page.bytes, page.charset));
  return ok({ data: `${JSON.stringify(metadata)}\n\n${text}`, metadata, sources: [{ url: page.finalUrl, title: null }], material: true });
}

/** Builds `fetch_web_page`: validate the URL, fetch through the bounded fetcher, store the bytes, register the source. */
export function createFetchWebPageTool(deps: { web: WebConfig; fetchPage: FetchPage }): Tool {
  return defineTool({
    definition,
    schema,
    deadlineMs: deps.web.total_timeout_seconds * 1_000 + DEADLINE_GRACE_MS,
    async run(input, context) {
      const url = validateWebUrl(input.url);
      if (!url.ok) return err(fromLowerLayer(url.error));
      const fetched = await deps.fetchPage(url.value.href, context.signal);
      if (!fetched.ok) return err(fromLowerLayer(fetched.error));
      const finalUrl = normalizeSourceUrl(fetched.value.finalUrl);
      if (finalUrl === null) return err(toolFailure("invalid_url"));
      const page: StoredPage = {
        finalUrl, mime: mediaType(fetched.value.contentType), charset: fetched.value.charset, bytes: fetched.value.bytes,
      };
      if (HTML_TYPES.has(page.mime)) return htmlOutcome(page, context.artifacts);
      if (TEXT_TYPES.has(page.mime)) return textOutcome(page, context.artifacts);
      return err(toolFailure("unsupported_content_type"));
    },
  });
}
