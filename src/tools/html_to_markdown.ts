import { z } from "zod";
import type { WebConfig } from "../config/types.ts";
import { err, ok } from "../errors.ts";
import { textArgument } from "./arguments.ts";
import { toolFailure } from "./failures.ts";
import { decodeText } from "./html.ts";
import { convertHtmlWithPandoc, PANDOC_STDOUT_HARD_MAX_BYTES } from "./pandoc.ts";
import { cleanText } from "./text.ts";
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

const schema = z.strictObject({ artifact_id: textArgument({ min: 1, max: ARTIFACT_ID_MAX_CHARACTERS }) });

/** Builds `html_to_markdown`: convert one of this session's HTML artifacts with the fixed Pandoc command. */
export function createHtmlToMarkdownTool(deps: { web: WebConfig; pandocExecutable: string | null }): Tool {
  const timeoutMs = deps.web.pandoc_timeout_seconds * 1_000;
  return defineTool({
    definition,
    schema,
    deadlineMs: timeoutMs + DEADLINE_GRACE_MS,
    async run(input, context) {
      const artifact = context.artifacts.get(input.artifact_id);
      if (artifact === null) return err(toolFailure("artifact_not_found"));
      if (artifact.kind !== "html") return err(toolFailure("unsupported_content_type"));
      // Pandoc reads UTF-8 only, so pages in other encodings are re-encoded first.
      const html = Buffer.from(decodeText(artifact.bytes, artifact.charset), "utf8");
      const maxStdoutBytes = Math.min(context.artifacts.remainingBytes(), PANDOC_STDOUT_HARD_MAX_BYTES);
      if (maxStdoutBytes <= 0) return err(toolFailure("invocation_limit"));
      const converted = await convertHtmlWithPandoc({
        executable: deps.pandocExecutable, html, timeoutMs, maxStdoutBytes, signal: context.signal, log: context.log,
      });
      if (!converted.ok) return converted;
      const markdown = cleanText(decodeText(converted.value, "utf-8")).trim();
      const stored = context.artifacts.add({
        kind: "markdown",
        contentType: "text/markdown",
        charset: "utf-8",
        bytes: Buffer.from(markdown, "utf8"),
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
