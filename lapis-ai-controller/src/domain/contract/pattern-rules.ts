// The rules a tool schema's `pattern` must meet so that the runtime's
// backtracking matcher takes time linear in the string (docs/protocol.md,
// "Patterns"). Each character of the string must decide the matcher's path:
//
// - pattern_backreference, pattern_lookaround, pattern_syntax: the parser
//   (pattern-parse.ts) refuses `\1`, `\k<…>`, `(?=…)`, `(?!…)`, `(?<=…)`,
//   `(?<!…)`, modifiers and anything else it does not know;
// - pattern_empty_repeat: a quantified part must not match the empty string
//   (`(a*)*`, `(a?)+`, `(|a)?`);
// - pattern_ambiguous: two alternatives of one group both match the empty
//   string, or, at any point, two ways on can take the same character:
//   `(a|a)*`, `a|ab`, `a*a*`, `\d+\.?\d+`, `.*x`, and the same place reached
//   through two repetitions, as `(a+)+` does;
// - pattern_unanchored_unbounded: a pattern that does not start with `^` is
//   tried at every position of the string, so it may not use `*`, `+` or
//   `{n,}`, and its longest match is at most UNANCHORED_FREE_MATCH
//   characters, or, when the string has a `maxLength`, longest match times
//   maxLength is at most UNANCHORED_BUDGET.
//
// Counted repetitions are judged with their mandatory copies written out
// (the matcher's counter decides those steps). The analysis itself is
// linear in the links it makes, which a budget shared by the patterns of one
// schema bounds (patterns_too_complex).
//
// With these, each character is looked at a bounded number of times per start
// position, and an anchored pattern has one start position.
import { type CharSet, overlaps, union } from "./char-sets.ts";
import { type ParseRule, parsePattern, type PatternNode } from "./pattern-parse.ts";

/** The longest match allowed to a pattern without a leading `^` when the string has no `maxLength`. */
export const UNANCHORED_FREE_MATCH = 4;
/** With a `maxLength`: the most character steps (longest match x maxLength) of a pattern without a leading `^`. */
export const UNANCHORED_BUDGET = 4 * 1024 * 1024;

/** Why a pattern is refused. */
export type PatternRule = ParseRule | "pattern_empty_repeat" | "pattern_ambiguous" | "pattern_unanchored_unbounded" | "patterns_too_complex";

/** How many next-list entries the analysis may build (shared by all patterns of one schema); each costs a few dozen ns. */
export const ANALYSIS_BUDGET = 200_000;

/** What is left of an analysis budget; `patternRule` spends from it. */
export type AnalysisBudget = { entries: number };

interface Shape {
  readonly nullable: boolean;
  readonly first: readonly number[];
  readonly last: readonly number[];
  /** Longest match in characters (Infinity when unbounded). */
  readonly longest: number;
}

class Rejected {
  readonly rule: PatternRule;
  constructor(rule: PatternRule) {
    this.rule = rule;
  }
}

/** What one place can take: ASCII as four 32-bit words, the rest as ranges. */
type Taken = { readonly ascii: Uint32Array; wide: CharSet };

function takenOf(set: CharSet): Taken {
  const ascii = new Uint32Array(4);
  const wide: [number, number][] = [];
  for (const [lo, hi] of set) {
    for (let c = lo; c <= Math.min(hi, 127); c++) ascii[c >> 5] = (ascii[c >> 5] as number) | (1 << (c & 31));
    if (hi >= 128) wide.push([Math.max(lo, 128), hi]);
  }
  return { ascii, wide };
}

/**
 * Builds the positions (one per character place) and, as it links a place
 * to the places that may come next (one link per way of getting there),
 * keeps what each place's successors can take together: a link whose place
 * can take a character already taken by an earlier successor is the
 * ambiguity (`(a|ab)`, `a*a`, and `(a+)+`, whose inner and outer loop link
 * the same place twice). The start list is checked the same way.
 */
class Positions {
  readonly #sets: Taken[] = [];
  readonly #next: Taken[] = [];
  readonly #budget: AnalysisBudget;

  constructor(budget: AnalysisBudget) {
    this.#budget = budget;
  }

  /** Links each place of `from` to each place of `next`, paying for the links; throws on an ambiguity. */
  #link(from: readonly number[], next: readonly number[]): void {
    if (next.length === 0) return;
    this.#budget.entries -= from.length * next.length;
    if (this.#budget.entries < 0) throw new Rejected("patterns_too_complex");
    for (const p of from) Positions.#take(this.#next[p] as Taken, next, this.#sets);
  }

  /** Adds what the places `next` take to `into`; throws when two of them can take the same character. */
  static #take(into: Taken, next: readonly number[], sets: readonly Taken[]): void {
    for (const q of next) {
      const taken = sets[q] as Taken;
      for (let w = 0; w < 4; w++) {
        if (((into.ascii[w] as number) & (taken.ascii[w] as number)) !== 0) throw new Rejected("pattern_ambiguous");
        into.ascii[w] = (into.ascii[w] as number) | (taken.ascii[w] as number);
      }
      if (taken.wide.length > 0) {
        if (overlaps(into.wide, taken.wide)) throw new Rejected("pattern_ambiguous");
        into.wide = union(into.wide, taken.wide);
      }
    }
  }

  /** Checks the places a match can start with. */
  start(first: readonly number[]): void {
    Positions.#take({ ascii: new Uint32Array(4), wide: [] }, first, this.#sets);
  }

  /**
   * The mandatory copies of a counted repetition written out: `x{3}` as
   * `xxx`, `x{2,5}` as `xx` then `x{0,3}`, `x{2,}` as `xx` then `x*`. The
   * matcher's counter decides those steps, so each copy is its own place;
   * judged as one loop instead, `(x{2}){3}` or `\d{4}\d{2}` would look
   * ambiguous. The optional rest stays a loop (the same verdict, and no
   * quadratic nest). Null when there are fewer than two mandatory copies or
   * writing them out would take more than UNROLL_PLACES places in all.
   */
  #unrolled(node: PatternNode & { k: "rep" }): PatternNode | null {
    if (node.min < 2 || nullable(node.body)) return null;
    if (node.min * places(node.body) + this.#sets.length > UNROLL_PLACES) return null;
    const items: PatternNode[] = Array.from({ length: node.min }, () => node.body);
    if (node.max > node.min) items.push({ k: "rep", body: node.body, min: 0, max: node.max - node.min });
    return { k: "seq", items };
  }

  shape(node: PatternNode): Shape {
    switch (node.k) {
      case "char": {
        const p = this.#sets.push(takenOf(node.set)) - 1;
        this.#next.push({ ascii: new Uint32Array(4), wide: [] });
        return { nullable: false, first: [p], last: [p], longest: 1 };
      }
      case "assert":
        return { nullable: true, first: [], last: [], longest: 0 };
      case "seq": {
        // Own arrays, grown in place: linear in the places, however many parts can be skipped.
        const first: number[] = [];
        let last: number[] = [];
        let skippable = true;
        let longest = 0;
        for (const item of node.items) {
          const next = this.shape(item);
          this.#link(last, next.first);
          if (skippable) for (const p of next.first) first.push(p);
          if (next.nullable) for (const p of next.last) last.push(p);
          else last = [...next.last];
          skippable &&= next.nullable;
          longest += next.longest;
        }
        return { nullable: skippable, first, last, longest };
      }
      case "alt": {
        const options = node.options.map((o) => this.shape(o));
        if (options.filter((o) => o.nullable).length > 1) throw new Rejected("pattern_ambiguous");
        return {
          nullable: options.some((o) => o.nullable),
          first: options.flatMap((o) => o.first),
          last: options.flatMap((o) => o.last),
          longest: Math.max(...options.map((o) => o.longest)),
        };
      }
      case "rep": {
        const unrolled = this.#unrolled(node);
        if (unrolled !== null) return this.shape(unrolled);
        const body = this.shape(node.body);
        if (body.nullable) throw new Rejected("pattern_empty_repeat");
        if (node.max > 1) this.#link(body.last, body.first);
        return { nullable: node.min === 0, first: body.first, last: body.last, longest: body.longest * node.max };
      }
    }
  }
}

/** How many character places a node has. */
function places(node: PatternNode): number {
  switch (node.k) {
    case "char": return 1;
    case "assert": return 0;
    case "seq": return node.items.reduce((n, item) => n + places(item), 0);
    case "alt": return node.options.reduce((n, option) => n + places(option), 0);
    case "rep": return places(node.body);
  }
}

function nullable(node: PatternNode): boolean {
  switch (node.k) {
    case "char": return false;
    case "assert": return true;
    case "seq": return node.items.every(nullable);
    case "alt": return node.options.some(nullable);
    case "rep": return node.min === 0 || nullable(node.body);
  }
}

/** The most character places counted repetitions are written out to; past it they are judged as loops (stricter). */
const UNROLL_PLACES = 1024;

const anchored = (node: PatternNode): boolean =>
  (node.k === "assert" && node.start) || (node.k === "seq" && node.items[0]?.k === "assert" && node.items[0].start);

/**
 * Checks `pattern` (of a string schema with `maxLength`, if any) against the
 * rules, spending from `budget` (pass one budget for all patterns of a
 * schema); returns null or the rule it breaks.
 */
export function patternRule(pattern: string, maxLength?: number, budget: AnalysisBudget = { entries: ANALYSIS_BUDGET }): PatternRule | null {
  const parsed = parsePattern(pattern);
  if (!parsed.ok) return parsed.rule;
  const positions = new Positions(budget);
  let shape: Shape;
  try {
    shape = positions.shape(parsed.node);
    positions.start(shape.first);
  } catch (error) {
    if (error instanceof Rejected) return error.rule;
    throw error;
  }
  if (anchored(parsed.node) || shape.longest <= UNANCHORED_FREE_MATCH) return null;
  if (maxLength !== undefined && shape.longest * maxLength <= UNANCHORED_BUDGET) return null;
  return "pattern_unanchored_unbounded";
}
