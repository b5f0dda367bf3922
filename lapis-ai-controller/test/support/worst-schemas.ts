// The costliest tool input schemas the subset still allows, each with an
// argument that fills the bridge's 1 MiB body and fails only at its last
// item (so the validator walks all of it), and a small one that passes.
// Used by the load test and by the bench's validation row.
import { ANALYSIS_BUDGET, patternRule } from "../../src/domain/contract/pattern-rules.ts";
import type { ToolDefinition } from "../../src/domain/contract/tools.ts";

type Args = Record<string, unknown>;

/** One worst case: the tool, a passing and a failing argument, and the rule the failing one meets. */
export type WorstCase = {
  readonly name: string;
  readonly description: string;
  readonly schema: ToolDefinition["inputSchema"];
  readonly passing: Args;
  readonly failing: Args;
  readonly rule: string;
};

/** The largest argument JSON, leaving room for the JSON-RPC envelope inside the 1 MiB body. */
export const WORST_ARGUMENT_BYTES = 1024 * 1024 - 2048;

const LETTERS = [..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"];

/** Fills an array with `item(i)` while the argument stays within the byte budget, then appends `last`. */
function fill(key: string, item: (i: number) => unknown, bytesPerItem: number, last: unknown): Args {
  const n = Math.floor((WORST_ARGUMENT_BYTES - 64 - JSON.stringify(last).length) / bytesPerItem);
  const xs = Array.from({ length: n }, (_, i) => item(i));
  xs.push(last);
  return { [key]: xs };
}

const strings = (pattern: string): ToolDefinition["inputSchema"] =>
  ({ type: "object", properties: { s: { type: "string", pattern } }, required: ["s"], additionalProperties: false });

/** The cases, built fresh (the failing arguments are about 1 MiB each). */
export function worstCases(): WorstCase[] {
  const entries = Array.from({ length: 1500 }, (_, i) => `v${i}`);
  const intArray = { type: "array", items: { type: "integer", maximum: 9 } } as const;
  const mapKeys = Math.floor((WORST_ARGUMENT_BYTES - 64) / 16);
  const map: Record<string, string> = {};
  for (let i = 0; i < mapKeys; i++) map[`k${100000 + i}`] = "abc";
  map[`k${100000 + mapKeys}`] = "ABC";
  return [
    {
      name: "alternation", description: "An anchored pattern of 62 alternatives under a repetition.",
      schema: strings(`^(?:${LETTERS.map((l) => `${l}!`).join("|")})+$`),
      passing: { s: "a!b!9!" }, failing: { s: `${"9!".repeat(Math.floor((WORST_ARGUMENT_BYTES - 16) / 2))}?` }, rule: "pattern",
    },
    {
      name: "unanchored", description: "An unanchored pattern with the longest match allowed without maxLength.",
      schema: strings("[a-z]{3}!"), passing: { s: "..xyz!.." }, failing: { s: "a".repeat(WORST_ARGUMENT_BYTES - 16) }, rule: "pattern",
    },
    {
      name: "unique-ints", description: "uniqueItems over integers.",
      schema: { type: "object", properties: { xs: { type: "array", uniqueItems: true, items: { type: "integer" } } } },
      passing: { xs: [1, 2, 3] }, failing: fill("xs", (i) => 100000 + i, 7, 100000), rule: "uniqueItems",
    },
    {
      name: "unique-objects", description: "uniqueItems over objects, the duplicate with its keys in another order.",
      schema: { type: "object", properties: { xs: { type: "array", uniqueItems: true, items: { type: "object", properties: { i: { type: "integer" }, t: { type: "string" } } } } } },
      passing: { xs: [{ i: 1, t: "x" }, { t: "x", i: 2 }] }, failing: fill("xs", (i) => ({ i: 100000 + i, t: "x" }), 21, { t: "x", i: 100000 }), rule: "uniqueItems",
    },
    {
      name: "enum", description: "A 1500-entry enum on every item.",
      schema: { type: "object", properties: { xs: { type: "array", items: { enum: entries } } } },
      passing: { xs: ["v1", "v1499"] }, failing: fill("xs", (i) => entries[i % entries.length], 8, "nope"), rule: "enum",
    },
    {
      name: "wide", description: "Seven anyOf branches, each walking the whole array.",
      schema: { type: "object", properties: { xs: { anyOf: Array.from({ length: 7 }, () => intArray) } } },
      passing: { xs: [1, 2] }, failing: fill("xs", () => 1, 2, "x"), rule: "anyOf",
    },
    {
      name: "map", description: "A pattern on every value of a map with many keys.",
      schema: { type: "object", properties: { m: { type: "object", additionalProperties: { type: "string", pattern: "^[a-z]+$" } } } },
      passing: { m: { a: "x" } }, failing: { m: map }, rule: "pattern",
    },
  ];
}

/** Patterns whose analysis at registration costs the most we know of, within 256 characters each. */
export function worstPatterns(): string[] {
  const chars = [...LETTERS, ..."!#%&,;:<=>@_~"];
  return [
    `^(?:${LETTERS.slice(0, 60).map((c) => `${c}?`).join("")}!){8}$`,
    `^${chars.map((c) => `${c}?`).join("")}$`,
    `^(?:${chars.join("|")})+$`,
    `^${chars.slice(0, 42).reduce((inner, c) => `(?:${c}${inner})?`, "")}$`,
  ];
}

/**
 * A tool schema holding as many of the worst patterns as the registration
 * bounds allow: 4096 pattern characters, and the analysis budget shared by
 * the schema's patterns.
 */
export function worstRegistrationSchema(): ToolDefinition["inputSchema"] {
  const patterns = worstPatterns();
  const properties: Record<string, { type: "string"; pattern: string }> = {};
  const budget = { entries: ANALYSIS_BUDGET };
  let chars = 0;
  for (let i = 0; ; i++) {
    const pattern = patterns[i % patterns.length] as string;
    const trial = { entries: budget.entries };
    if (chars + pattern.length > 4096 || patternRule(pattern, undefined, trial) !== null) break;
    budget.entries = trial.entries;
    chars += pattern.length;
    properties[`p${i}`] = { type: "string", pattern };
  }
  return { type: "object", properties };
}
