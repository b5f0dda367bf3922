// The answer's Markdown as far as it has streamed: only the `markdown` string
// of the final-answer JSON object, decoded as far as complete escapes go.
// Everything else stays hidden: reasoning (`<think>` blocks, or text before a
// stray closer), tool calls printed as JSON or tags (a JSON object whose
// first string value is not `markdown` never shows), and `source_urls`.
// Prose outside the JSON contract streams too when the caller allows it (the
// final check would take it as the answer: no web result was used): text that
// starts like prose, up to the first sign of structure (`{`, a fence, a
// tool-call tag or marker, `"markdown"`), after which it waits for the final
// answer. A turn that ends as a tool call after some prose showed that prose
// until her status line replaced it; never any of the call.

// Where prose stops being shown: the final check could read JSON, a fenced block or a tool call from here on.
const PROSE_END = /[{<]|```|\[TOOL_CALLS\]|"markdown"/;

/** The visible Markdown so far, or null while none of the answer's `markdown` (or, with `prose`, none of a prose answer) has arrived. */
export function partialMarkdown(content: string, prose = false): string | null {
  const body = visibleBody(content);
  if (body === null) return null;
  let i = skipSpace(body, 0);
  if (prose && i < body.length && !/[{[<`]/.test(body[i] ?? "")) {
    const text = body.slice(i);
    const end = text.search(PROSE_END);
    return end < 0 ? text : text.slice(0, end);
  }
  if (body.startsWith("```", i)) {
    const newline = body.indexOf("\n", i);
    if (newline < 0 || !/^```(json)?[ \t\r]*$/i.test(body.slice(i, newline))) return null;
    i = skipSpace(body, newline + 1);
  }
  if (body[i] !== "{") return null;
  i += 1;
  // Top-level keys, skipping values until `markdown`; any doubt hides everything.
  for (let keys = 0; keys < 8; keys += 1) {
    i = skipSpace(body, i);
    if (body[i] !== "\"") return null;
    const key = readString(body, i + 1);
    if (key === null || !key.closed) return null;
    i = skipSpace(body, key.end);
    if (body[i] !== ":") return null;
    i = skipSpace(body, i + 1);
    if (key.text === "markdown") {
      if (body[i] !== "\"") return null;
      const value = readString(body, i + 1);
      return value === null ? null : value.text;
    }
    if (key.text !== "source_urls") return null;
    const end = skipValue(body, i);
    if (end < 0) return null;
    i = skipSpace(body, end);
    if (body[i] !== ",") return null;
    i += 1;
  }
  return null;
}

// The content without reasoning; null while a reasoning block is still open.
function visibleBody(content: string): string | null {
  // No tag at all (the usual streamed answer): nothing to strip, and no regex over the whole text per chunk.
  if (!content.includes("<")) return content;
  let text = content.replace(/<(think|thinking|reasoning)>[\s\S]*?<\/\1>/gi, "");
  const closers = [...text.matchAll(/<\/(think|thinking|reasoning)>/gi)];
  const last = closers[closers.length - 1];
  if (last !== undefined) text = text.slice(last.index + last[0].length);
  if (/<(think|thinking|reasoning)>/i.test(text)) return null;
  return text;
}

function skipSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length && /\s/.test(text[i] ?? "")) i += 1;
  return i;
}

const ESCAPES: Readonly<Record<string, string>> = { "\"": "\"", "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

/** A JSON string body from `from` (after the opening quote): decoded text, whether it closed, where it ended; null when invalid. */
function readString(text: string, from: number): { text: string; closed: boolean; end: number } | null {
  let out = "";
  let i = from;
  // The next quote and backslash, each found again only once passed (one scan of the text per kind).
  let quote = text.indexOf("\"", i);
  let slash = text.indexOf("\\", i);
  while (i < text.length) {
    // Plain characters up to the next quote or backslash are taken as one slice (no string per character).
    if (quote >= 0 && quote < i) quote = text.indexOf("\"", i);
    if (slash >= 0 && slash < i) slash = text.indexOf("\\", i);
    const stop = quote < 0 ? slash : slash < 0 ? quote : Math.min(quote, slash);
    if (stop < 0) {
      out += text.slice(i);
      i = text.length;
      break;
    }
    if (stop > i) out += text.slice(i, stop);
    i = stop;
    if (text[i] === "\"") return { text: out, closed: true, end: i + 1 };
    const next = text[i + 1];
    if (next === undefined) break;
    if (next === "u") {
      const hex = text.slice(i + 2, i + 6);
      if (hex.length < 4) break;
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) return null;
      const unit = Number.parseInt(hex, 16);
      // A high surrogate waits for its partner.
      if (unit >= 0xd800 && unit <= 0xdbff) {
        const low = /^\\u([dD][c-fC-F][0-9a-fA-F]{2})/.exec(text.slice(i + 6, i + 12));
        if (low === null) {
          if (text.length - (i + 6) < 6) break;
          return null;
        }
        out += String.fromCharCode(unit, Number.parseInt(low[1] ?? "", 16));
        i += 12;
        continue;
      }
      out += String.fromCharCode(unit);
      i += 6;
      continue;
    }
    const escaped = ESCAPES[next];
    if (escaped === undefined) return null;
    out += escaped;
    i += 2;
  }
  return { text: out, closed: false, end: text.length };
}

/** Index after a complete JSON value at `from` (strings and brackets balanced); -1 when incomplete. */
function skipValue(text: string, from: number): number {
  let depth = 0;
  for (let i = from; i < text.length; i += 1) {
    const ch = text[i];
    if (ch === "\"") {
      const s = readString(text, i + 1);
      if (s === null || !s.closed) return -1;
      i = s.end - 1;
      if (depth === 0) return s.end;
    } else if (ch === "[" || ch === "{") depth += 1;
    else if (ch === "]" || ch === "}") {
      depth -= 1;
      if (depth === 0) return i + 1;
      if (depth < 0) return -1;
    } else if (depth === 0 && (ch === "," || /\s/.test(ch ?? ""))) return i;
  }
  return -1;
}
