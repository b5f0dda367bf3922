// Row 8: checking one tool call's arguments, in-process (`checkToolArguments`,
// what the bridge runs inside serve: nesting, then the schema), for the costliest schemas the subset allows,
// each with an argument filling the 1 MiB body and failing only at its last
// item (test/support/worst-schemas.ts). The baseline is JSON.parse of the
// same argument text in the same run: the cost of merely reading the body.
// One more figure: registering the schema whose pattern analysis costs the
// most (4096 characters of the costliest patterns we know), against an
// absolute goal, since `endpoints.register` also runs on serve's loop.
// Both are CPU time of this process (the work is CPU-bound and the machine
// may be shared, which would inflate wall time); wall time is in the note.
import { BRIDGE_LIMIT_DEFAULTS } from "../../src/execution/tool-bridge.ts";
import { checkToolArguments, checkToolDefinitions, TOOL_LIMIT_DEFAULTS } from "../../src/domain/contract/tools.ts";
import { worstCases, worstRegistrationSchema } from "../../test/support/worst-schemas.ts";
import type { BenchContext } from "../lib/context.ts";
import { type BenchRow, now, report, summary } from "../lib/stats.ts";

/** The goal: validating costs at most this many JSON.parse calls of the same text. */
const GOAL_RATIO = 10;

/** CPU milliseconds `f` takes in this process. */
function cpuMs(f: () => void): number {
  const before = process.cpuUsage();
  f();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/** Runs row 8. */
export async function validationRows(ctx: BenchContext): Promise<BenchRow[]> {
  const repeats = ctx.quick ? 3 : 9;
  const rows: BenchRow[] = [];
  for (const c of worstCases()) {
    const registered = checkToolDefinitions([{ name: c.name, description: c.description, inputSchema: c.schema }], TOOL_LIMIT_DEFAULTS);
    if (!registered.ok) throw new Error(`${c.name}: the worst case is not allowed (${registered.error.rule})`);
    const text = JSON.stringify(c.failing);
    const parse: number[] = [];
    const check: number[] = [];
    const wall: number[] = [];
    for (let i = 0; i < repeats + 1; i++) {
      let args: unknown;
      parse.push(cpuMs(() => { args = JSON.parse(text); }));
      let failed: ReturnType<typeof checkToolArguments> = null;
      const t0 = now();
      check.push(cpuMs(() => { failed = checkToolArguments(c.schema, args, BRIDGE_LIMIT_DEFAULTS.maxArgumentDepth); }));
      wall.push(now() - t0);
      const rule = (failed as ReturnType<typeof checkToolArguments>)?.rule;
      if (rule !== c.rule) throw new Error(`${c.name}: refused by ${rule ?? "nothing"}, expected ${c.rule}`);
    }
    // The first round warms the caches (compiled pattern, enum set); it is not counted.
    const p = summary(parse.slice(1));
    const v = summary(check.slice(1));
    const w = summary(wall.slice(1));
    rows.push(report({
      row: `validate ${c.name}`, figure: "1 MiB argument, CPU median", value: v.median, baseline: p.median, unit: "ms",
      goal: `<= ${GOAL_RATIO}x JSON.parse`, met: v.median <= GOAL_RATIO * p.median,
      note: `CPU p95 ${v.p95.toFixed(1)} ms, wall median ${w.median.toFixed(1)} ms, ${(text.length / 1024).toFixed(0)} KiB`,
    }));
    await new Promise((r) => setImmediate(r));
  }
  const schema = worstRegistrationSchema();
  const text = JSON.stringify(schema);
  const parse: number[] = [];
  const register: number[] = [];
  for (let i = 0; i < repeats + 1; i++) {
    parse.push(cpuMs(() => JSON.parse(text)));
    register.push(cpuMs(() => {
      const r = checkToolDefinitions([{ name: "worst", description: "d", inputSchema: schema }], TOOL_LIMIT_DEFAULTS);
      if (!r.ok) throw new Error(`the worst registration is refused: ${r.error.rule}`);
    }));
  }
  const reg = summary(register.slice(1));
  rows.push(report({
    row: "register worst patterns", figure: "endpoints.register check, CPU median", value: reg.median, baseline: summary(parse.slice(1)).median, unit: "ms",
    goal: "<= 20 ms", met: reg.median <= 20, note: `CPU p95 ${reg.p95.toFixed(1)} ms, ${Object.keys(schema.properties as object).length} patterns, ${(text.length / 1024).toFixed(1)} KiB`,
  }));
  return rows;
}
