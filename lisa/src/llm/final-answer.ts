// The final-answer contract: a tolerant
// parser of `{"markdown": ..., "source_urls": [...]}` (fenced or with prose
// around it), host verification of every source against the invocation's
// registry, and the plain-text rule for answers that used no web results.

import type { SourceEntry, SourceLookup } from "../tools/port.ts";
import { codePointLength, findJsonObjects, stripThinking, unfence } from "./text.ts";

/** Why a final answer could not be used as it stands (model-facing repair reasons). */
export type MalformedReason =
  | "not_json" | "json_required" | "missing_markdown" | "empty_markdown" | "markdown_too_long"
  | "invalid_source_urls" | "truncated";

/** Outcome of checking one final answer. */
export type FinalAnswerCheck =
  | { readonly ok: true; readonly markdown: string; readonly sources: SourceEntry[]; readonly rejectedUrls: string[] }
  | { readonly ok: false; readonly problem: "malformed"; readonly reason: MalformedReason }
  | { readonly ok: false; readonly problem: "sources"; readonly rejectedUrls: string[]; readonly required: boolean };

/** What the check needs besides the text. */
export interface FinalAnswerOptions {
  /** Ceiling of `markdown` in characters (`llm.max_response_characters`). */
  readonly maxCharacters: number;
  /** The invocation's source registry. */
  readonly sources: SourceLookup;
  /** The server reported the reply as cut off (`finish_reason: "length"`). */
  readonly truncated?: boolean;
}

// Signs that the model meant to produce the JSON contract (or a tool call)
// rather than plain prose; such text is never accepted as plain Markdown.
function looksStructured(text: string): boolean {
  return unfence(text).startsWith("{")
    || /^```json/i.test(text)
    || /"markdown"\s*:/.test(text)
    || text.includes("<tool_call>")
    || text.includes("[TOOL_CALLS]");
}

type MarkdownCheck = { readonly ok: true; readonly value: string } | { readonly ok: false; readonly reason: MalformedReason };

function checkMarkdown(value: unknown, maxCharacters: number): MarkdownCheck {
  if (typeof value !== "string") return { ok: false, reason: "missing_markdown" };
  const markdown = stripThinking(value);
  if (markdown === "") return { ok: false, reason: "empty_markdown" };
  if (codePointLength(markdown) > maxCharacters) return { ok: false, reason: "markdown_too_long" };
  return { ok: true, value: markdown };
}

/** True for an absolute http(s) URL without credentials. */
function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.username === "" && url.password === "";
  } catch {
    return false;
  }
}

/** Splits proposed URLs into registered sources (deduplicated) and rejected ones. */
function verifySources(proposed: readonly string[], lookup: SourceLookup): { sources: SourceEntry[]; rejected: string[] } {
  const sources: SourceEntry[] = [];
  const rejected: string[] = [];
  const seen = new Set<string>();
  for (const raw of proposed) {
    const url = raw.trim();
    const entry = isHttpUrl(url) ? lookup.resolve(url) : null;
    if (entry === null) {
      rejected.push(url);
      continue;
    }
    if (seen.has(entry.url)) continue;
    seen.add(entry.url);
    sources.push(entry);
  }
  return { sources, rejected };
}

/** Checks one final reply against the contract; never throws. */
export function checkFinalAnswer(text: string, options: FinalAnswerOptions): FinalAnswerCheck {
  if (options.truncated === true) return { ok: false, problem: "malformed", reason: "truncated" };
  const cleaned = stripThinking(text);
  const material = options.sources.materialResultsUsed();
  if (!looksStructured(cleaned)) {
    // Plain-text rule: prose is an answer only when no web result entered the conversation.
    if (material) return { ok: false, problem: "malformed", reason: "json_required" };
    const markdown = checkMarkdown(cleaned, options.maxCharacters);
    if (!markdown.ok) return { ok: false, problem: "malformed", reason: markdown.reason };
    return { ok: true, markdown: markdown.value, sources: [], rejectedUrls: [] };
  }
  const objects = findJsonObjects(cleaned);
  const answer = objects.find((object) => "markdown" in object);
  if (answer === undefined) return { ok: false, problem: "malformed", reason: objects.length === 0 ? "not_json" : "missing_markdown" };
  const markdown = checkMarkdown(answer["markdown"], options.maxCharacters);
  if (!markdown.ok) return { ok: false, problem: "malformed", reason: markdown.reason };
  const rawUrls = answer["source_urls"] ?? [];
  if (!Array.isArray(rawUrls) || !rawUrls.every((url): url is string => typeof url === "string")) {
    return { ok: false, problem: "malformed", reason: "invalid_source_urls" };
  }
  const { sources, rejected } = verifySources(rawUrls, options.sources);
  // Some valid sources: the invalid ones are silently dropped (never rendered).
  if (sources.length === 0 && (rejected.length > 0 || material)) {
    return { ok: false, problem: "sources", rejectedUrls: rejected, required: material };
  }
  return { ok: true, markdown: markdown.value, sources, rejectedUrls: rejected };
}

