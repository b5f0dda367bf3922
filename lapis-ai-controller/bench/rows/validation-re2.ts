// The evaluation of re2js (RE2's linear-time engine in pure JavaScript) as
// the matcher of tool-schema patterns, against the same goals as row 8
// (bench/rows/validation.ts): matching a 1 MiB argument at most 10x the
// JSON.parse of its text, and registering the costliest patterns in at most
// 20 ms. Cases: the string worst cases of row 8, and patterns the static
// analyser refuses today (`^.*\.json$`, `a|ab`, nested quantifiers), each on a
// 1 MiB string that fails only at its end. The verdict was no (docs/protocol.md,
// "Patterns"), so re2js is not a dependency: install it for this row only with
// `npm install --no-save re2js@2.10.0` (a dependency in package.json, even a
// dev one, changes how Deno starts in this package); without it the row says so
// and measures nothing.
import { worstCases, worstPatterns } from "../../test/support/worst-schemas.ts";
import type { BenchContext } from "../lib/context.ts";
import { type BenchRow, report, summary } from "../lib/stats.ts";

const GOAL_RATIO = 10;

/** The part of re2js's API this row uses. */
type Re2Js = {
  compile(pattern: string): { test(input: string): boolean };
  translateRegExp(pattern: string): string;
};
const MIB = 1024 * 1024;

function cpuMs(f: () => void): number {
  const before = process.cpuUsage();
  f();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/** The simplest anchored pattern, then patterns the analyser refuses (pattern_ambiguous), each with a 1 MiB string failing at its last character. */
const MORE_CASES: readonly [string, string][] = [
  ["^[a-z]+$", `${"a".repeat(MIB - 16)}!`],
  ["^.*\\.json$", `${"a.".repeat(MIB / 2 - 8)}x`],
  ["^(?:a|ab)+$", `${"ab".repeat(MIB / 2 - 8)}!`],
  ["^(a+)+$", `${"a".repeat(MIB - 16)}!`],
  ["^(?:\\w+\\s?)+$", `${"ab ".repeat(MIB / 3 - 8)}!`],
  ["^\\S+@\\S+\\.\\S+$", `${"a@b.".repeat(MIB / 4 - 8)} `],
];

/** Runs the re2js evaluation rows. */
export async function validationRe2Rows(ctx: BenchContext): Promise<BenchRow[]> {
  const name = "re2js";
  let RE2JS: Re2Js;
  try {
    ({ RE2JS } = (await import(name)) as { RE2JS: Re2Js });
  } catch {
    console.log("  validation-re2: re2js is not installed (npm install --no-save re2js@2.10.0); nothing measured");
    return [];
  }
  const repeats = ctx.quick ? 3 : 9;
  const cases: { name: string; pattern: string; values: string[]; text: string }[] = [];
  for (const c of worstCases()) {
    const props = (c.schema as { properties: Record<string, { pattern?: string; additionalProperties?: { pattern?: string } }> }).properties;
    const s = props.s?.pattern;
    const m = props.m?.additionalProperties?.pattern;
    const failing = c.failing as { s?: string; m?: Record<string, string> };
    if (s !== undefined && failing.s !== undefined) cases.push({ name: c.name, pattern: s, values: [failing.s], text: JSON.stringify(failing) });
    if (m !== undefined && failing.m !== undefined) cases.push({ name: c.name, pattern: m, values: Object.values(failing.m), text: JSON.stringify(failing) });
  }
  for (const [pattern, value] of MORE_CASES) cases.push({ name: pattern, pattern, values: [value], text: JSON.stringify({ s: value }) });
  const rows: BenchRow[] = [];
  for (const c of cases) {
    const re = RE2JS.compile(RE2JS.translateRegExp(c.pattern));
    const parse: number[] = [];
    const check: number[] = [];
    for (let i = 0; i < repeats + 1; i++) {
      parse.push(cpuMs(() => JSON.parse(c.text)));
      let passed = 0;
      check.push(cpuMs(() => { for (const v of c.values) if (re.test(v)) passed++; }));
      if (passed === c.values.length) throw new Error(`${c.name}: the failing argument passed under re2js`);
    }
    const p = summary(parse.slice(1));
    const v = summary(check.slice(1));
    rows.push(report({
      row: `re2js ${c.name}`, figure: "1 MiB argument, CPU median", value: v.median, baseline: p.median, unit: "ms",
      goal: `<= ${GOAL_RATIO}x JSON.parse`, met: v.median <= GOAL_RATIO * p.median, note: `CPU p95 ${v.p95.toFixed(1)} ms, ${c.values.length} value(s)`,
    }));
    await new Promise((r) => setImmediate(r));
  }
  // Registration: compiling as many of the worst patterns as 4096 pattern characters hold.
  const patterns: string[] = [];
  for (let i = 0, chars = 0; ; i++) {
    const p = worstPatterns()[i % worstPatterns().length] as string;
    if (chars + p.length > 4096) break;
    chars += p.length;
    patterns.push(p);
  }
  const compile: number[] = [];
  for (let i = 0; i < repeats + 1; i++) compile.push(cpuMs(() => { for (const p of patterns) RE2JS.compile(RE2JS.translateRegExp(p)); }));
  const reg = summary(compile.slice(1));
  rows.push(report({
    row: "re2js register worst", figure: "compile, CPU median", value: reg.median, baseline: 0, unit: "ms",
    goal: "<= 20 ms", met: reg.median <= 20, note: `CPU p95 ${reg.p95.toFixed(1)} ms, ${patterns.length} patterns`,
  }));
  return rows;
}
