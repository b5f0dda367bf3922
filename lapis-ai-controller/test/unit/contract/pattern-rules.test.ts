// The pattern rules (issue 32 point 5): a tool schema's `pattern` is refused
// at registration unless every character decides the matcher's path, so a
// tool call's argument never makes the backtracking matcher stall serve.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ANALYSIS_BUDGET, patternRule, UNANCHORED_BUDGET, UNANCHORED_FREE_MATCH } from "../../../src/domain/contract/pattern-rules.ts";
import { ID_PATTERN } from "../../../src/domain/contract/schema.ts";
import { EVENT_KINDS } from "../../../src/domain/contract/events.ts";
import { METHODS } from "../../../src/domain/contract/methods.ts";
import { ENDPOINT_INVOKE, FRAMES, NOTIFICATIONS } from "../../../src/domain/contract/notifications.ts";
import { checkToolDefinitions, TOOL_LIMIT_DEFAULTS } from "../../../src/domain/contract/tools.ts";

const refusedBy = (rule: string, patterns: readonly string[]) => {
  for (const p of patterns) assert.equal(patternRule(p), rule, p);
};

test("AIC-TOOL-02 backreferences and lookarounds are refused, named by their rule", () => {
  refusedBy("pattern_backreference", ["^(a)\\1$", "^(?<x>a)\\k<x>$", "(a)(b)\\2"]);
  refusedBy("pattern_lookaround", ["^(?=a)a$", "^(?!a)b$", "^(?<=a)b$", "^(?<!a)b$"]);
  refusedBy("pattern_syntax", ["^(?i:a)$", "[", "^a{2,1}$", "^\\uD83D$", "^a**$", "^\\q$", "^[\\d-z]$", "^a{,3}$"]);
});

test("AIC-TOOL-02 nested, ambiguous and adjacent overlapping quantifiers are refused", () => {
  refusedBy("pattern_ambiguous", [
    "^(a+)+$", "^(?:a+)*b$", "(a|a)*", "^(a|ab)*$", "a*a*a*b", "^a*a*$", "^\\d+\\.?\\d+$",
    "^.*\\.json$", "^\\S+@\\S+\\.\\S+$", "^(?:a|ab)$", "abc|abd", "^(?:^|$)a$", "^(?:\\w+\\s?)+$", "^[a-z]+[a-c]$",
    "^\\p{L}+\\d+$", "^a{2,4}a$", "^[a-z]{1,3}[a-z]$", "^(?:a{1,2}){3}$", "^(?:a{2})+a$", "^(?:[a-z]{100}){100}$",
  ]);
  refusedBy("pattern_empty_repeat", ["^(a?)*$", "^(a*)+$", "^(?:|a)?$", "^(?:a|b?)+$", "^(?:^)*a$"]);
});

test("AIC-TOOL-02 a pattern without ^ may not repeat without bound or match long, unless maxLength bounds its cost", () => {
  refusedBy("pattern_unanchored_unbounded", ["a+b", "[a-z]*!", "\\d{3}-\\d{4}", "x{5}", "^a|b+"]);
  assert.equal(patternRule("abc"), null);
  assert.equal(patternRule("a".repeat(UNANCHORED_FREE_MATCH)), null);
  assert.equal(patternRule("\\d{3}-\\d{4}", Math.floor(UNANCHORED_BUDGET / 8)), null);
  assert.equal(patternRule("\\d{3}-\\d{4}", Math.floor(UNANCHORED_BUDGET / 8) + 1), "pattern_unanchored_unbounded");
  assert.equal(patternRule("a+b", 1000), "pattern_unanchored_unbounded");
});

test("AIC-TOOL-02 the patterns people write for ids, numbers, dates and choices pass", () => {
  for (const p of [
    ID_PATTERN, "^\\d+(?:\\.\\d+)?$", "^(?:ab+)+$", "^[^@]+@[^@]+$", "^(?<year>\\d{4})-(?<month>\\d{2})-(?<day>\\d{2})$",
    "^(?:red|green|blue)$", "^[\\p{L}]+$", "^[a-z][a-z0-9_]{0,63}$", "^😀+$", "^[\\x4d-z]+$", "^\\w+\\s\\w+$", "^(?:[a-z]+-)*[0-9]+$",
    "^-?(?:0|[1-9]\\d*)$", "^https://[^/\\s]+(?:/[^/\\s]*)*$", "abc", "^\\u{1F600}$",
    // Counted repetitions are judged written out: the matcher's counter decides those steps.
    "^(?:x{2}){3}$", "^#(?:[0-9a-fA-F]{3}){1,2}$", "^[a-z]{2}[a-z0-9]*$", "^\\d{4}\\d{2}$", "^(a{2})+$", "^(?:a|b){0,5}c$", "^x{1000}$",
    "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
  ]) {
    assert.equal(patternRule(p), null, p);
  }
  // Every pattern of the protocol contract itself meets the rules.
  const found: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v !== "object" || v === null) return;
    for (const [k, x] of Object.entries(v)) (k === "pattern" && typeof x === "string" ? found.push(x) : walk(x));
  };
  walk([METHODS, EVENT_KINDS, NOTIFICATIONS, ENDPOINT_INVOKE, FRAMES]);
  assert.ok(found.length >= 4, `contract patterns found: ${found.length}`);
  for (const p of found) assert.equal(patternRule(p), null, p);
});

test("AIC-TOOL-02 endpoints.register refuses such a pattern with invalid_params naming the path and the rule", () => {
  const tool = (pattern: string, maxLength?: number) => ({
    name: "t", description: "d",
    inputSchema: { type: "object", properties: { s: { type: "string", pattern, ...(maxLength === undefined ? {} : { maxLength }) } } },
  });
  const refused = (pattern: string, maxLength?: number) => {
    const r = checkToolDefinitions([tool(pattern, maxLength)], TOOL_LIMIT_DEFAULTS);
    return r.ok ? null : { code: r.error.code, where: r.error.where, rule: r.error.rule };
  };
  assert.deepEqual(refused("^(a+)+$", 64), { code: "invalid_params", where: "tools[0].inputSchema.properties.s.pattern", rule: "pattern_ambiguous" });
  assert.deepEqual(refused("(a)\\1"), { code: "invalid_params", where: "tools[0].inputSchema.properties.s.pattern", rule: "pattern_backreference" });
  assert.deepEqual(refused("(?<=a)b"), { code: "invalid_params", where: "tools[0].inputSchema.properties.s.pattern", rule: "pattern_lookaround" });
  assert.deepEqual(refused("x".repeat(257)), { code: "invalid_params", where: "tools[0].inputSchema.properties.s.pattern", rule: "pattern_too_long" });
  assert.deepEqual(refused("a+b"), { code: "invalid_params", where: "tools[0].inputSchema.properties.s.pattern", rule: "pattern_unanchored_unbounded" });
  // All patterns of one schema together are bounded too: each is analysed at registration.
  const many = (n: number) => {
    const properties = Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, { type: "string", pattern: `^${"a".repeat(250)}${i % 10}$` }]));
    const r = checkToolDefinitions([{ name: "t", description: "d", inputSchema: { type: "object", properties } }], TOOL_LIMIT_DEFAULTS);
    return r.ok ? null : r.error.rule;
  };
  assert.equal(many(16), null);
  assert.equal(many(17), "patterns_too_long");
  assert.equal(refused("\\d{3}-\\d{4}", 64), null);
  assert.equal(refused("^[a-z]+$"), null);
});

test("AIC-TOOL-02 the analysis spends from a budget shared by one schema's patterns: patterns_too_complex past it", () => {
  const chain = `^(?:${[..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ01234567"].map((c) => `${c}?`).join("")}!){8}$`;
  const budget = { entries: ANALYSIS_BUDGET };
  assert.equal(patternRule(chain, undefined, budget), null);
  const spent = ANALYSIS_BUDGET - budget.entries;
  assert.ok(spent > 1000 && spent < ANALYSIS_BUDGET / 4, `spent ${spent}`);
  assert.equal(patternRule(chain, undefined, { entries: spent - 1 }), "patterns_too_complex");
  assert.equal(patternRule(chain, undefined, { entries: spent }), null);
});
