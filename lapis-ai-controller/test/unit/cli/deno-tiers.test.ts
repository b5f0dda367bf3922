// P-DNO-05: under the V8 flags Deno's serve runs with, a hot function is
// optimised by Maglev and never by TurboFan; without `--max-opt=2` the same
// script reaches TurboFan, so the flag is what keeps TurboFan's compiler (and
// the resident memory it brings) out of a Deno serve. Node keeps its tiers.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { denoV8Args, DENO_V8_FLAGS, nodeV8Args, V8_FLAGS } from "../../../src/cli/v8-flags.ts";
import { DENO_CHILD_ENV } from "../../support/deno-env.ts";
import { DENO } from "../../support/processes.ts";
import { tempDir } from "../../support/temp.ts";

// A loop hot enough that V8 tiers it up as far as it is allowed to.
const HOT = `function f(a) { let s = 0; for (let i = 0; i < a.length; i++) s += a[i] * 2; return s; }
const a = Array.from({ length: 1000 }, (_, i) => i);
let t = 0;
for (let i = 0; i < 200000; i++) t += f(a);
console.log(t);
`;

/** The optimising tiers V8 compiled `script` to (`MAGLEV`, `TURBOFAN_JS`), from --trace-opt. */
function tiers(script: string, v8Flags: string): Set<string> {
  const run = spawnSync(DENO, ["run", `${v8Flags},--trace-opt`, script], { env: { ...process.env, ...DENO_CHILD_ENV }, encoding: "utf8", timeout: 60_000 });
  assert.equal(run.status, 0, run.stderr);
  return new Set([...run.stdout.matchAll(/\(target ([A-Z_]+)\)/g)].map((m) => m[1] as string));
}

test("P-DNO-05 Deno's serve flags stop V8 at Maglev: a hot loop is never compiled by TurboFan", (t) => {
  assert.deepEqual(DENO_V8_FLAGS, [...V8_FLAGS, "--max-opt=2"]);
  assert.deepEqual(nodeV8Args(), [...V8_FLAGS], "Node keeps TurboFan");
  const script = join(tempDir(t), "hot.mjs");
  writeFileSync(script, HOT);
  const flagged = tiers(script, denoV8Args()[0] as string);
  assert.ok(flagged.has("MAGLEV"), [...flagged].join(","));
  assert.ok(![...flagged].some((tier) => tier.startsWith("TURBOFAN")), [...flagged].join(","));
  // Without the cap the same loop reaches TurboFan: the flag is what keeps it out.
  const plain = tiers(script, `--v8-flags=${V8_FLAGS.join(",")}`);
  assert.ok([...plain].some((tier) => tier.startsWith("TURBOFAN")), [...plain].join(","));
});
