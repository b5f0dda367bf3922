// Text helpers shared by the quirk normaliser and the final-answer parser:
// hidden reasoning removal, code fences, and locating a JSON value in prose.

// Reasoning blocks some models print into `content` (DeepSeek R1, Qwen3, QwQ ...).
const THINK_BLOCK = /<(think|thinking|reasoning)>[\s\S]*?<\/\1>/gi;
const THINK_OPEN = /<(think|thinking|reasoning)>/i;
const THINK_CLOSE = /<\/(think|thinking|reasoning)>/gi;

/** Removes hidden reasoning: closed blocks, an unterminated opener, and text before a stray closer. */
export function stripThinking(text: string): string {
  let out = text.replace(THINK_BLOCK, "");
  // Templates that open the block themselves leave only "reasoning</think>answer".
  let lastClose = -1;
  for (const match of out.matchAll(THINK_CLOSE)) lastClose = match.index + match[0].length;
  if (lastClose >= 0) out = out.slice(lastClose);
  // A truncated reply may end inside a block that never closed.
  const open = THINK_OPEN.exec(out);
  if (open !== null) out = out.slice(0, open.index);
  return out.trim();
}

const WHOLE_FENCE = /^```[A-Za-z0-9_-]*[ \t]*\r?\n([\s\S]*?)\r?\n?```$/;

/** The inside of a text that is exactly one fenced code block, else the trimmed text. */
export function unfence(text: string): string {
  const trimmed = text.trim();
  const match = WHOLE_FENCE.exec(trimmed);
  return match?.[1] !== undefined ? match[1].trim() : trimmed;
}

/** Index just past the bracket matching the one at `start`, honouring JSON strings; -1 if unbalanced. */
function matchingBracket(text: string, start: number): number {
  const open = text[start];
  const close = open === "{" ? "}" : "]";
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i += 1) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i += 1;
      else if (ch === "\"") inString = false;
      continue;
    }
    if (ch === "\"") inString = true;
    else if (ch === open) depth += 1;
    else if (ch === close) {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** Parses JSON, returning undefined instead of throwing. */
export function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

// Bounds the search so a hostile reply full of braces costs little.
const MAX_CANDIDATES = 32;

/**
 * JSON objects found in `text`: the whole (unfenced) text when it parses, else
 * each balanced `{...}` that parses, in order of appearance.
 */
export function findJsonObjects(text: string): Record<string, unknown>[] {
  const body = unfence(text);
  const whole = tryParseJson(body);
  if (isRecord(whole)) return [whole];
  const found: Record<string, unknown>[] = [];
  let from = 0;
  for (let tries = 0; tries < MAX_CANDIDATES; tries += 1) {
    const start = body.indexOf("{", from);
    if (start === -1) break;
    const end = matchingBracket(body, start);
    if (end === -1) break;
    const value = tryParseJson(body.slice(start, end));
    if (isRecord(value)) {
      found.push(value);
      from = end;
    } else {
      from = start + 1;
    }
  }
  return found;
}

/** True for a plain (non-array) object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Number of Unicode code points (what configured character limits count). */
export function codePointLength(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}
