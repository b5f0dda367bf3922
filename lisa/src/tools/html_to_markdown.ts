import { isUtf8 } from "node:buffer";
import * as v from "valibot";
import type { WebConfig } from "../config/types.ts";
import { err, ok } from "../errors.ts";
import { textArgument } from "./arguments.ts";
import { toolFailure } from "./failures.ts";
import { decodeText } from "./html.ts";
import { convertHtmlWithPandoc, PANDOC_STDOUT_HARD_MAX_BYTES } from "./pandoc.ts";
import { cleanText } from "./text.ts";
import type { ConversionSlots } from "./port.ts";
import { defineTool, type Tool } from "./tool.ts";

/** Longest artifact id argument accepted, in code points. */
export const ARTIFACT_ID_MAX_CHARACTERS = 100;
// Time for the temporary directory and cleanup on top of Pandoc's own deadline.
const DEADLINE_GRACE_MS = 2_000;

const definition = {
  name: "html_to_markdown",
  description:
    "Convert an HTML page downloaded by fetch_web_page during this same request into Markdown and return it " +
    "(long pages are truncated). Pass the artifact_id that fetch_web_page returned.",
  parameters: {
    type: "object",
    properties: {
      artifact_id: {
        type: "string",
        minLength: 1,
        maxLength: ARTIFACT_ID_MAX_CHARACTERS,
        description: "The artifact_id returned by fetch_web_page, such as html_K7F4t2...",
      },
    },
    required: ["artifact_id"],
    additionalProperties: false,
  },
} as const;

/** The WHATWG encoding a charset label names, with `decodeText`'s fallback to UTF-8 for unknown labels. */
function encodingName(charset: string): string {
  try {
    return new TextDecoder(charset).encoding;
  } catch {
    return "utf-8";
  }
}

const UTF8_BOM = [0xef, 0xbb, 0xbf] as const;

/**
 * The page as UTF-8 for Pandoc's stdin, which reads UTF-8 only. Valid UTF-8 is
 * passed as the stored bytes themselves (without a BOM, as decoding drops it).
 * Other encodings, and invalid UTF-8 (which Pandoc would read as Latin-1
 * instead of replacing with U+FFFD), are decoded and re-encoded.
 */
export function pandocInput(bytes: Uint8Array, charset: string): Uint8Array {
  if (encodingName(charset) === "utf-8" && isUtf8(bytes)) {
    const bom = UTF8_BOM.every((byte, index) => bytes[index] === byte);
    return bom ? bytes.subarray(UTF8_BOM.length) : bytes;
  }
  return Buffer.from(decodeText(bytes, charset), "utf8");
}

const schema = v.strictObject({ artifact_id: textArgument({ min: 1, max: ARTIFACT_ID_MAX_CHARACTERS }) });

/**
 * Waits up to `waitMs` for a conversion permit: the release function, or the
 * failure (`conversion_busy` when the wait ran out, `cancelled` when the caller gave up).
 */
async function acquireSlot(slots: ConversionSlots, waitMs: number, signal: AbortSignal) {
  const waited = new AbortController();
  const timer = setTimeout(() => waited.abort(), waitMs);
  try {
    return ok(await slots.acquire(AbortSignal.any([signal, waited.signal])));
  } catch {
    return err(signal.aborted ? toolFailure("cancelled") : toolFailure("conversion_busy", true));
  } finally {
    clearTimeout(timer);
  }
}

/** Dependencies of `html_to_markdown`. */
export interface HtmlToMarkdownDeps {
  readonly web: WebConfig;
  readonly pandocExecutable: string | null;
  /** Process-wide permits: at most `web.pandoc_max_concurrent` Pandoc processes run at once. */
  readonly slots: ConversionSlots;
}

/**
 * Builds `html_to_markdown`: convert one of this session's HTML artifacts with
 * the fixed Pandoc command. A conversion waits at most
 * `web.pandoc_timeout_seconds` for a free permit, then runs with its own
 * `web.pandoc_timeout_seconds`; the tool's deadline covers both.
 */
export function createHtmlToMarkdownTool(deps: HtmlToMarkdownDeps): Tool {
  const timeoutMs = deps.web.pandoc_timeout_seconds * 1_000;
  return defineTool({
    definition,
    schema,
    deadlineMs: 2 * timeoutMs + DEADLINE_GRACE_MS,
    async run(input, context) {
      const artifact = context.artifacts.get(input.artifact_id);
      if (artifact === null) return err(toolFailure("artifact_not_found"));
      if (artifact.kind !== "html") return err(toolFailure("unsupported_content_type"));
      const html = pandocInput(artifact.bytes, artifact.charset);
      const maxStdoutBytes = Math.min(context.artifacts.remainingBytes(), PANDOC_STDOUT_HARD_MAX_BYTES);
      if (maxStdoutBytes <= 0) return err(toolFailure("invocation_limit"));
      const slot = await acquireSlot(deps.slots, timeoutMs, context.signal);
      if (!slot.ok) {
        if (slot.error.code === "conversion_busy") {
          context.log.warn("pandoc_busy", { max_concurrent: deps.web.pandoc_max_concurrent, waited_ms: timeoutMs });
        }
        return slot;
      }
      let converted;
      try {
        converted = await convertHtmlWithPandoc({
          executable: deps.pandocExecutable, html, timeoutMs, maxStdoutBytes, maxMemoryMb: deps.web.pandoc_max_memory_mb,
          signal: context.signal, log: context.log,
        });
      } finally {
        slot.value();
      }
      if (!converted.ok) return converted;
      const markdown = cleanText(converted.value).trim();
      const stored = context.artifacts.add({
        kind: "markdown",
        contentType: "text/markdown",
        charset: "utf-8",
        text: markdown,
        sourceUrl: artifact.sourceUrl,
        title: artifact.title,
      });
      if (!stored.ok) return stored;
      const metadata = {
        artifact_id: stored.value.id,
        source_artifact_id: artifact.id,
        source_url: artifact.sourceUrl,
        title: artifact.title,
        markdown_characters: markdown.length,
      };
      const header = `Source URL: ${artifact.sourceUrl}\nTitle: ${artifact.title ?? "(none)"}\n\n`;
      return ok({
        data: header + markdown,
        metadata,
        sources: [{ url: artifact.sourceUrl, title: artifact.title }],
        material: true,
      });
    },
  });
}
