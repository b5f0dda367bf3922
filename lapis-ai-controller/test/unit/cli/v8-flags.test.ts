// AIC-HEAP-01: the ways a release and a checkout start serve carry the V8 heap flags of
// src/cli/v8-flags.ts, and under them the young generation stays within its
// cap however many objects a process churns through (the structure whose
// growth made serve's resident set grow turn after turn).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { launcherRelease, launcherScript } from "../../../src/cli/launcher.ts";
import { unitFile } from "../../../src/cli/service-unit.ts";
import { denoV8Args, nodeReexecArgv, nodeV8Args, SEMI_SPACE_MIB } from "../../../src/cli/v8-flags.ts";
import { DENO, PACKAGE_ROOT } from "../../support/processes.ts";
import { startServe } from "../../support/serve-process.ts";
import { tempDir } from "../../support/temp.ts";
import { DENO_CHILD_ENV } from "../../support/deno-env.ts";

const RELEASE = "/home/u/.local/lib/lapis-ai-controller/releases/" + "b".repeat(64);
const DENO_BIN = "/home/u/.local/lib/lapis-ai-controller/runtime/deno-1/deno";

// Allocates ~3 million short-lived objects (far beyond any semi-space), lets
// one scavenge finish the cycle in progress, and prints the young
// generation's committed size. Read without that scavenge, V8 sometimes
// reports a new space above two semi-spaces (about 1 run in 30, up to
// 7 MiB with 2 MiB semi-spaces: a cycle caught midway); after it, 4 MiB in
// every run. The process needs V8's gc (--expose-gc) and fails without it.
const CHURN = `import v8 from "node:v8";
let keep = [];
for (let i = 0; i < 3e6; i++) { keep.push({ i, s: "x" + i }); if (keep.length > 2e5) keep = []; }
if (typeof globalThis.gc !== "function") throw new Error("run with --expose-gc");
globalThis.gc({ type: "minor" });
const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
console.log(JSON.stringify({ size: young.space_size }));
`;

function youngSize(bin: string, args: readonly string[]): number {
  const run = spawnSync(bin, args, { env: { ...process.env, ...DENO_CHILD_ENV }, encoding: "utf8", timeout: 60_000 });
  assert.equal(run.status, 0, run.stderr);
  return (JSON.parse(run.stdout.trim()) as { size: number }).size;
}

test("AIC-HEAP-01 P-DNO-05 the launcher and the systemd unit run Deno with the V8 heap flags", () => {
  assert.deepEqual(denoV8Args(), [`--v8-flags=--max-semi-space-size=${SEMI_SPACE_MIB},--expose-gc,--max-opt=2,--no-concurrent-recompilation`]);
  assert.deepEqual(nodeV8Args(), [`--max-semi-space-size=${SEMI_SPACE_MIB}`, "--expose-gc"]);
  const script = launcherScript(DENO_BIN, RELEASE, "b".repeat(64));
  assert.match(script, new RegExp(`^exec '${DENO_BIN}' 'run' .* '--v8-flags=--max-semi-space-size=${SEMI_SPACE_MIB},--expose-gc,--max-opt=2,--no-concurrent-recompilation' '--config' `, "m"));
  assert.deepEqual(launcherRelease(script), { deno: DENO_BIN, releaseDir: RELEASE }, "the launcher is still read back as ours");
  const unit = unitFile({ deno: DENO_BIN, releaseDir: RELEASE, digest: "b".repeat(64), instance: "default", configPath: "/c/config.json" });
  const exec = /^ExecStart=(.*)$/m.exec(unit)?.[1] as string;
  assert.ok(exec.split(" ").includes(`--v8-flags=--max-semi-space-size=${SEMI_SPACE_MIB},--expose-gc,--max-opt=2,--no-concurrent-recompilation`), exec);
});

test("AIC-HEAP-01 the entry's shebang, the serve tasks of a checkout and the bench (its in-process rows run serve's code) carry the same flags", () => {
  const flag = (denoV8Args()[0] as string).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const shebang = readFileSync(join(PACKAGE_ROOT, "src", "main.ts"), "utf8").split("\n")[0] as string;
  assert.match(shebang, new RegExp(` ${flag}$`));
  for (const file of ["package.json", "deno.json"]) {
    const tasks = JSON.parse(readFileSync(join(PACKAGE_ROOT, file), "utf8")) as { scripts?: Record<string, string>; tasks?: Record<string, string> };
    const serve = (tasks.scripts ?? tasks.tasks ?? {}).serve as string;
    assert.match(serve, new RegExp(` ${flag} src/main\\.ts serve$`), file);
  }
  const npmBench = (JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts.bench as string;
  assert.equal(npmBench, `node ${nodeV8Args().join(" ")} bench/run.ts`);
  const denoBench = (JSON.parse(readFileSync(join(PACKAGE_ROOT, "deno.json"), "utf8")) as { tasks: Record<string, string> }).tasks.bench as string;
  assert.match(denoBench, new RegExp(` ${flag} bench/run\\.ts --runtime=deno$`));
});

test("AIC-HEAP-01 under the flags the young generation stays within two semi-spaces on Node and on Deno", (t) => {
  const script = join(tempDir(t), "churn.mjs");
  writeFileSync(script, CHURN);
  const cap = 2 * SEMI_SPACE_MIB * 1024 * 1024;
  const node = youngSize(process.execPath, [...nodeV8Args(), script]);
  const deno = youngSize(DENO, ["run", ...denoV8Args(), script]);
  assert.ok(node <= cap, `Node young generation ${node} bytes > ${cap}`);
  assert.ok(deno <= cap, `Deno young generation ${deno} bytes > ${cap}`);
  // Without them the same churn grows it past the cap: the flags are what bounds it.
  assert.ok(youngSize(process.execPath, ["--expose-gc", script]) > cap, "Node's default young generation outgrows the cap");
});

test("AIC-HEAP-01 a Node serve started by hand without the flags replaces itself, same pid, with them; one that has them runs as it is", async (t) => {
  const flag = `--max-semi-space-size=${SEMI_SPACE_MIB}`;
  assert.deepEqual(nodeReexecArgv({ execPath: "/n", execArgv: ["--inspect"], argv: ["/n", "/p/src/main.ts", "serve", "--instance", "x"] }),
    ["/n", flag, "--expose-gc", "--inspect", "/p/src/main.ts", "serve", "--instance", "x"]);
  assert.equal(nodeReexecArgv({ execPath: "/n", execArgv: [flag, "--expose-gc"], argv: ["/n", "/p/src/main.ts", "serve"] }), null);
  // One flag of two is not enough: the process is replaced with both.
  assert.deepEqual(nodeReexecArgv({ execPath: "/n", execArgv: [flag], argv: ["/n", "/p/src/main.ts", "serve"] }), ["/n", flag, "--expose-gc", flag, "/p/src/main.ts", "serve"]);
  const serve = await startServe(t, { tokens: [{ id: "t", envName: "AIC_V8_TOKEN", value: "v8-flags-test-token-not-a-secret-0001" }], runtime: "node", v8Flags: false });
  assert.ok(!serve.argv.includes(flag), "started without the flag");
  const cmdline = readFileSync(`/proc/${serve.pid}/cmdline`, "utf8").split("\0");
  for (const wanted of nodeV8Args()) assert.ok(cmdline.includes(wanted), `the serve process (pid ${serve.pid}) runs with ${wanted}: ${cmdline.join(" ")}`);
  assert.ok(cmdline.includes("serve"));
});
