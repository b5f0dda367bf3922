// A parser for the regular expressions a tool schema's `pattern` may use: the
// ECMAScript syntax with the `u` flag, minus backreferences, lookarounds and
// group modifiers. It builds the tree the pattern rules (pattern-rules.ts)
// inspect. Anything it does not know is refused, so the tree it returns is
// the expression the runtime will run; a pattern must also compile as a
// `u`-flag RegExp.
import { ANY, type CharSet, charSet, complement, DIGIT, DOT, SPACE, union, WORD } from "./char-sets.ts";

/** One node of a parsed pattern. Groups are their content; `max` may be Infinity. */
export type PatternNode =
  | { readonly k: "char"; readonly set: CharSet }
  | { readonly k: "assert"; readonly start: boolean }
  | { readonly k: "seq"; readonly items: readonly PatternNode[] }
  | { readonly k: "alt"; readonly options: readonly PatternNode[] }
  | { readonly k: "rep"; readonly body: PatternNode; readonly min: number; readonly max: number };

/** Why a pattern was refused before its shape was looked at. */
export type ParseRule = "pattern_backreference" | "pattern_lookaround" | "pattern_syntax";

class Refused {
  readonly rule: ParseRule;
  constructor(rule: ParseRule) {
    this.rule = rule;
  }
}

/** Counts at or above this are treated as unbounded. */
const HUGE = 1_000_000;
const SYNTAX = new Set("^$\\.*+?()[]{}|/");
const ID_START = /^[A-Za-z_$]$/;
const ID_PART = /^[A-Za-z0-9_$]$/;
const HEX = /^[0-9A-Fa-f]$/;

interface Cursor {
  readonly src: readonly string[];
  i: number;
}

const peek = (c: Cursor, ahead = 0): string | undefined => c.src[c.i + ahead];
const fail = (rule: ParseRule = "pattern_syntax"): never => {
  throw new Refused(rule);
};
function take(c: Cursor): string {
  const ch = c.src[c.i++];
  return ch ?? fail();
}

/** Parses `pattern`; returns its tree or the rule that refused it. */
export function parsePattern(pattern: string): { readonly ok: true; readonly node: PatternNode } | { readonly ok: false; readonly rule: ParseRule } {
  const c: Cursor = { src: [...pattern], i: 0 };
  try {
    const node = disjunction(c);
    if (c.i < c.src.length) fail();
    return { ok: true, node };
  } catch (error) {
    if (error instanceof Refused) return { ok: false, rule: error.rule };
    throw error;
  }
}

function disjunction(c: Cursor): PatternNode {
  const options = [alternative(c)];
  while (peek(c) === "|") {
    c.i++;
    options.push(alternative(c));
  }
  return options.length === 1 ? (options[0] as PatternNode) : { k: "alt", options };
}

function alternative(c: Cursor): PatternNode {
  const items: PatternNode[] = [];
  while (c.i < c.src.length && peek(c) !== "|" && peek(c) !== ")") items.push(term(c));
  return items.length === 1 ? (items[0] as PatternNode) : { k: "seq", items };
}

function term(c: Cursor): PatternNode {
  const ch = peek(c);
  if (ch === "^" || ch === "$" || (ch === "\\" && (peek(c, 1) === "b" || peek(c, 1) === "B"))) {
    c.i += ch === "\\" ? 2 : 1;
    if (isQuantifierStart(peek(c))) fail();
    return { k: "assert", start: ch === "^" };
  }
  return quantified(c, atom(c));
}

const isQuantifierStart = (ch: string | undefined): boolean => ch === "*" || ch === "+" || ch === "?" || ch === "{";

function atom(c: Cursor): PatternNode {
  const ch = take(c);
  if (ch === ".") return { k: "char", set: DOT };
  if (ch === "[") return { k: "char", set: charClass(c) };
  if (ch === "\\") {
    const escaped = escape(c, false);
    return { k: "char", set: escaped };
  }
  if (ch === "(") return group(c);
  if (SYNTAX.has(ch) && ch !== "/") fail();
  return { k: "char", set: charSet(ch.codePointAt(0) as number) };
}

function group(c: Cursor): PatternNode {
  if (peek(c) === "?") {
    c.i++;
    const kind = take(c);
    if (kind === "=" || kind === "!") fail("pattern_lookaround");
    if (kind === "<" && (peek(c) === "=" || peek(c) === "!")) fail("pattern_lookaround");
    if (kind === "<") groupName(c);
    else if (kind !== ":") fail();
  }
  const inner = disjunction(c);
  if (take(c) !== ")") fail();
  return inner;
}

function groupName(c: Cursor): void {
  if (!ID_START.test(take(c))) fail();
  while (peek(c) !== ">") if (!ID_PART.test(take(c))) fail();
  c.i++;
}

function quantified(c: Cursor, body: PatternNode): PatternNode {
  const ch = peek(c);
  let min: number;
  let max: number;
  if (ch === "*" || ch === "+" || ch === "?") {
    c.i++;
    min = ch === "+" ? 1 : 0;
    max = ch === "?" ? 1 : Infinity;
  } else if (ch === "{") {
    c.i++;
    min = count(c);
    max = min;
    if (peek(c) === ",") {
      c.i++;
      max = peek(c) === "}" ? Infinity : count(c);
    }
    if (take(c) !== "}" || min > max) fail();
  } else {
    return body;
  }
  if (peek(c) === "?") c.i++;
  if (isQuantifierStart(peek(c))) fail();
  return { k: "rep", body, min, max: max >= HUGE ? Infinity : max };
}

function count(c: Cursor): number {
  let digits = "";
  while (/^[0-9]$/.test(peek(c) ?? "")) digits += take(c);
  if (digits === "") fail();
  return Math.min(Number(digits), HUGE);
}

/** A class `[…]` after its `[`. A `\p{…}` anywhere in it makes it ANY (it is not modelled). */
function charClass(c: Cursor): CharSet {
  const negated = peek(c) === "^";
  if (negated) c.i++;
  const parts: CharSet[] = [];
  let approximate = false;
  while (peek(c) !== "]") {
    const from = classAtom(c);
    approximate ||= from.approximate;
    if (peek(c) === "-" && peek(c, 1) !== "]" && peek(c, 1) !== undefined) {
      c.i++;
      const to = classAtom(c);
      const lo = from.point;
      const hi = to.point;
      if (lo === undefined || hi === undefined || lo > hi) fail();
      parts.push([[lo as number, hi as number]]);
    } else {
      parts.push(from.set);
    }
  }
  c.i++;
  if (approximate) return ANY;
  return negated ? complement(union(...parts)) : union(...parts);
}

function classAtom(c: Cursor): { readonly set: CharSet; readonly point?: number; readonly approximate: boolean } {
  const ch = take(c);
  if (ch !== "\\") return { set: charSet(ch.codePointAt(0) as number), point: ch.codePointAt(0) as number, approximate: false };
  if (peek(c) === "b") {
    c.i++;
    return { set: charSet(8), point: 8, approximate: false };
  }
  if (peek(c) === "-") {
    c.i++;
    return { set: charSet(0x2d), point: 0x2d, approximate: false };
  }
  const letter = peek(c) ?? "";
  const set = escape(c, true);
  if ("dDwWsSpP".includes(letter)) return { set, approximate: letter === "p" || letter === "P" };
  return { set, point: (set[0] as readonly [number, number])[0], approximate: false };
}

/** An escape after its backslash, as the set of what it matches. */
function escape(c: Cursor, inClass: boolean): CharSet {
  const ch = take(c);
  switch (ch) {
    case "d": return DIGIT;
    case "D": return complement(DIGIT);
    case "w": return WORD;
    case "W": return complement(WORD);
    case "s": return SPACE;
    case "S": return complement(SPACE);
    case "p":
    case "P":
      if (take(c) !== "{") fail();
      while (peek(c) !== "}") if (!/^[A-Za-z0-9_=]$/.test(take(c))) fail();
      c.i++;
      return ANY;
    case "f": return charSet(0x0c);
    case "n": return charSet(0x0a);
    case "r": return charSet(0x0d);
    case "t": return charSet(0x09);
    case "v": return charSet(0x0b);
    case "0":
      if (/^[0-9]$/.test(peek(c) ?? "")) fail();
      return charSet(0);
    case "c": {
      const letter = take(c);
      if (!/^[A-Za-z]$/.test(letter)) fail();
      return charSet((letter.codePointAt(0) as number) % 32);
    }
    case "x": return charSet(hex(c, 2));
    case "u": return charSet(unicodeEscape(c));
    case "k": return fail(inClass ? "pattern_syntax" : "pattern_backreference");
    default:
      if (/^[1-9]$/.test(ch)) return fail(inClass ? "pattern_syntax" : "pattern_backreference");
      if (!SYNTAX.has(ch)) fail();
      return charSet(ch.codePointAt(0) as number);
  }
}

function hex(c: Cursor, digits: number): number {
  let text = "";
  for (let n = 0; n < digits; n++) {
    const d = take(c);
    if (!HEX.test(d)) fail();
    text += d;
  }
  return Number.parseInt(text, 16);
}

/** `\uHHHH` or `\u{H…}`; a surrogate half is refused (write the character or `\u{…}`). */
function unicodeEscape(c: Cursor): number {
  let point: number;
  if (peek(c) === "{") {
    c.i++;
    let text = "";
    while (peek(c) !== "}") {
      const d = take(c);
      if (!HEX.test(d) || text.length >= 6) fail();
      text += d;
    }
    c.i++;
    point = Number.parseInt(text === "" ? "x" : text, 16);
    if (!(point <= 0x10ffff)) fail();
  } else {
    point = hex(c, 4);
  }
  if (point >= 0xd800 && point <= 0xdfff) fail();
  return point;
}
