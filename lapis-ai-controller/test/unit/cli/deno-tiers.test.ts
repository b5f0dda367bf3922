// P-DNO-05: under the V8 flags Deno's serve runs with, a hot function is
// optimised by Maglev, never by TurboFan, and compiled on the thread that runs
// it, never by a compiler thread; without `--max-opt=2` and
// `--no-concurrent-recompilation` the same script reaches TurboFan on compiler
// threads, so the flags are what keep TurboFan's compiler and the compiler
// threads' malloc arenas out of a Deno serve. Node keeps its defaults.
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

/** The optimising tiers V8 compiled `script` to (`MAGLEV`, `TURBOFAN_JS`) and the modes it compiled in (`Synchronous`, `Concurrent`), from --trace-opt. */
function compiled(script: string, v8Flags: string): { tiers: Set<string>; modes: Set<string> } {
  const run = spawnSync(DENO, ["run", `${v8Flags},--trace-opt`, script], { env: { ...process.env, ...DENO_CHILD_ENV }, encoding: "utf8", timeout: 60_000 });
  assert.equal(run.status, 0, run.stderr);
  const compiling = run.stdout.split("\n").filter((line) => line.startsWith("[compiling method"));
  return {
    tiers: new Set([...run.stdout.matchAll(/\(target ([A-Z_]+)\)/g)].map((m) => m[1] as string)),
    modes: new Set(compiling.map((line) => /ConcurrencyMode::k([A-Za-z]+)/.exec(line)?.[1] ?? "unknown")),
  };
}

test("P-DNO-05 Deno's serve flags stop V8 at Maglev, compiling on the running thread: a hot loop is never compiled by TurboFan or a compiler thread", (t) => {
  assert.deepEqual(DENO_V8_FLAGS, [...V8_FLAGS, "--max-opt=2", "--no-concurrent-recompilation"]);
  assert.deepEqual(nodeV8Args(), [...V8_FLAGS], "Node keeps its defaults");
  const script = join(tempDir(t), "hot.mjs");
  writeFileSync(script, HOT);
  const flagged = compiled(script, denoV8Args()[0] as string);
  assert.ok(flagged.tiers.has("MAGLEV"), [...flagged.tiers].join(","));
  assert.ok(![...flagged.tiers].some((tier) => tier.startsWith("TURBOFAN")), [...flagged.tiers].join(","));
  assert.deepEqual([...flagged.modes], ["Synchronous"]);
  // Without them the same loop reaches TurboFan, compiled on compiler threads: the flags are what keep both out.
  const plain = compiled(script, `--v8-flags=${V8_FLAGS.join(",")}`);
  assert.ok([...plain.tiers].some((tier) => tier.startsWith("TURBOFAN")), [...plain.tiers].join(","));
  assert.ok(plain.modes.has("Concurrent"), [...plain.modes].join(","));
});
