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
// With these, each character is looked at a bounded number of times per start
// position, and an anchored pattern has one start position.
import { type CharSet, overlaps } from "./char-sets.ts";
import { type ParseRule, parsePattern, type PatternNode } from "./pattern-parse.ts";

/** The longest match allowed to a pattern without a leading `^` when the string has no `maxLength`. */
export const UNANCHORED_FREE_MATCH = 4;
/** With a `maxLength`: the most character steps (longest match x maxLength) of a pattern without a leading `^`. */
export const UNANCHORED_BUDGET = 4 * 1024 * 1024;

/** Why a pattern is refused. */
export type PatternRule = ParseRule | "pattern_empty_repeat" | "pattern_ambiguous" | "pattern_unanchored_unbounded";

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

/**
 * Builds the positions (one per character place) and, for each, the list of
 * places that may come next, one entry per way of getting there; the start
 * list is `first` of the whole pattern.
 */
class Positions {
  readonly sets: CharSet[] = [];
  readonly follow: number[][] = [];

  shape(node: PatternNode): Shape {
    switch (node.k) {
      case "char": {
        const p = this.sets.push(node.set) - 1;
        this.follow.push([]);
        return { nullable: false, first: [p], last: [p], longest: 1 };
      }
      case "assert":
        return { nullable: true, first: [], last: [], longest: 0 };
      case "seq": {
        let acc: Shape = { nullable: true, first: [], last: [], longest: 0 };
        for (const item of node.items) {
          const next = this.shape(item);
          for (const p of acc.last) (this.follow[p] as number[]).push(...next.first);
          acc = {
            nullable: acc.nullable && next.nullable,
            first: acc.nullable ? [...acc.first, ...next.first] : acc.first,
            last: next.nullable ? [...next.last, ...acc.last] : next.last,
            longest: acc.longest + next.longest,
          };
        }
        return acc;
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
        const body = this.shape(node.body);
        if (body.nullable) throw new Rejected("pattern_empty_repeat");
        if (node.max > 1) for (const p of body.last) (this.follow[p] as number[]).push(...body.first);
        return { nullable: node.min === 0, first: body.first, last: body.last, longest: body.longest * node.max };
      }
    }
  }
}

/** True when two entries of `next` are the same place or can take the same character. */
function ambiguous(next: readonly number[], sets: readonly CharSet[]): boolean {
  // Distinct places first (cheap), so the pairwise test runs on at most one entry per place.
  if (new Set(next).size !== next.length) return true;
  for (let i = 0; i < next.length; i++) {
    for (let j = i + 1; j < next.length; j++) {
      if (overlaps(sets[next[i] as number] as CharSet, sets[next[j] as number] as CharSet)) return true;
    }
  }
  return false;
}

const anchored = (node: PatternNode): boolean =>
  (node.k === "assert" && node.start) || (node.k === "seq" && node.items[0]?.k === "assert" && node.items[0].start);

/** Checks `pattern` (of a string schema with `maxLength`, if any) against the rules; returns null or the rule it breaks. */
export function patternRule(pattern: string, maxLength?: number): PatternRule | null {
  const parsed = parsePattern(pattern);
  if (!parsed.ok) return parsed.rule;
  const positions = new Positions();
  let shape: Shape;
  try {
    shape = positions.shape(parsed.node);
  } catch (error) {
    if (error instanceof Rejected) return error.rule;
    throw error;
  }
  if (ambiguous(shape.first, positions.sets) || positions.follow.some((next) => ambiguous(next, positions.sets))) return "pattern_ambiguous";
  if (anchored(parsed.node) || shape.longest <= UNANCHORED_FREE_MATCH) return null;
  if (maxLength !== undefined && shape.longest * maxLength <= UNANCHORED_BUDGET) return null;
  return "pattern_unanchored_unbounded";
}
