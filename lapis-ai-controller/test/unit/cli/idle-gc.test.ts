// P-DNO-03: serve gives its heap's garbage back whenever it goes quiet
// (Deno never runs V8's memory reducer): one full collection after start-up
// and after each busy spell, none while busy and none twice for one quiet
// spell; counted with fake ports (CPU readings), never timed. And under serve's
// V8 flags both runtimes expose the `gc` it calls.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { test } from "node:test";
import { IDLE_GC_LIMITS, idleGcSection, processIdleGcPorts, startIdleGc, type IdleGcLimits, type IdleGcPorts } from "../../../src/cli/idle-gc.ts";
import { checkServiceConfig } from "../../../src/service.ts";
import { denoV8Args, nodeV8Args } from "../../../src/cli/v8-flags.ts";
import { DENO } from "../../support/processes.ts";
import { startServe } from "../../support/serve-process.ts";
import { tempDir } from "../../support/temp.ts";
import { DENO_CHILD_ENV } from "../../support/deno-env.ts";

/** Fake ports: the test advances CPU time and fires the checks itself. */
function fakePorts(collectCpuMs = 0, limits: IdleGcLimits = IDLE_GC_LIMITS) {
  const state = { cpu: 0, collects: 0, stopped: false, tick: (): void => {} };
  const ports: IdleGcPorts = {
    cpuMs: () => state.cpu,
    collect: () => { state.collects += 1; state.cpu += collectCpuMs; },
    every: (ms, tick) => {
      assert.equal(ms, limits.checkMs);
      state.tick = tick;
      return () => { state.stopped = true; };
    },
  };
  const check = (cpuUsedMs: number) => { state.cpu += cpuUsedMs; state.tick(); };
  return { state, ports, check };
}

test("P-DNO-03 one collection per quiet spell: after start-up, none while busy, one again after the next busy spell", () => {
  const { state, ports, check } = fakePorts();
  const stop = startIdleGc(ports);
  check(0);
  assert.equal(state.collects, 0, "one quiet check is not yet quiet enough");
  check(1);
  assert.equal(state.collects, 1, "start-up's garbage goes at the second quiet check");
  for (let i = 0; i < 10; i++) check(0);
  assert.equal(state.collects, 1, "nothing more to give back while still quiet");
  for (let i = 0; i < 5; i++) check(IDLE_GC_LIMITS.quietCpuMs + 1);
  assert.equal(state.collects, 1, "never while busy");
  check(0);
  check(IDLE_GC_LIMITS.quietCpuMs + 1);
  check(0);
  assert.equal(state.collects, 1, "a busy check in between starts the count again");
  check(0);
  assert.equal(state.collects, 2);
  stop();
  assert.ok(state.stopped);
});

test("P-DNO-03 the collection's own CPU time does not count as serve being busy", () => {
  const { state, ports, check } = fakePorts(50);
  startIdleGc(ports);
  check(0);
  check(0);
  assert.equal(state.collects, 1);
  for (let i = 0; i < 6; i++) check(0);
  assert.equal(state.collects, 1, "the 50 ms the collection took did not make a busy spell");
});

test("P-DNO-03 under serve's V8 flags Node and Deno expose gc; without them there are no ports", (t) => {
  assert.equal(processIdleGcPorts(), null, "this test process runs without serve's flags");
  const script = join(tempDir(t), "gc.mjs");
  writeFileSync(script, "globalThis.gc({ type: \"major\", execution: \"sync\", flavor: \"last-resort\" }); console.log(typeof globalThis.gc);\n");
  for (const [bin, args] of [[process.execPath, [...nodeV8Args(), script]], [DENO, ["run", ...denoV8Args(), script]]] as const) {
    const run = spawnSync(bin, args, { env: { ...process.env, ...DENO_CHILD_ENV }, encoding: "utf8", timeout: 60_000 });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout.trim(), "function");
  }
});

test("P-DNO-03 config limits.idleGc sets the collector's limits within bounds, and enabled:false turns it off", () => {
  assert.deepEqual(idleGcSection(undefined), { ok: true, value: IDLE_GC_LIMITS });
  const custom = idleGcSection({ checkMs: 1000, quietChecks: 3, quietCpuMs: 20 });
  assert.deepEqual(custom, { ok: true, value: { checkMs: 1000, quietChecks: 3, quietCpuMs: 20 } });
  assert.deepEqual(idleGcSection({ enabled: false }), { ok: true, value: null });
  for (const [entry, where] of [
    [{ checkMs: 99 }, "config.limits.idleGc.checkMs"], [{ checkMs: 60_001 }, "config.limits.idleGc.checkMs"],
    [{ quietChecks: 0 }, "config.limits.idleGc.quietChecks"], [{ quietCpuMs: 1.5 }, "config.limits.idleGc.quietCpuMs"],
    [{ enabled: "no" }, "config.limits.idleGc.enabled"], [{ surprise: 1 }, "config.limits.idleGc.surprise"], [[], "config.limits.idleGc"],
  ] as const) {
    assert.deepEqual(idleGcSection(entry as never), { ok: false, where });
    const checked = checkServiceConfig({ limits: { idleGc: entry as never } }, null);
    assert.equal(checked.ok, false);
    if (!checked.ok) assert.deepEqual([checked.error.code, checked.error.where], ["config_invalid", where]);
  }
  assert.equal(checkServiceConfig({ limits: { idleGc: { enabled: false, checkMs: 250 } } }, null).ok, true);
  // The configured limits are the ones the collector runs by: three quiet checks of under 20 ms.
  const limits = { checkMs: 1000, quietChecks: 3, quietCpuMs: 20 };
  const { state, ports, check } = fakePorts(0, limits);
  startIdleGc(ports, limits);
  check(19);
  check(19);
  assert.equal(state.collects, 0);
  check(19);
  assert.equal(state.collects, 1);
});

/** Waits (within 60 s) until serve has used no CPU tick (10 ms) for 4 s, then stops it and returns its requested collections. */
async function quietThenStop(serve: Awaited<ReturnType<typeof startServe>>): Promise<string[]> {
  // Wait (within a deadline) until serve has used no CPU tick (10 ms) for 4 s: eight checks under the
  // threshold but at most one, so two quiet checks in a row have passed and the collector has run.
  const ticks = () => {
    const stat = readFileSync(`/proc/${serve.pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]);
  };
  const deadline = Date.now() + 60_000;
  let quietSince = Date.now();
  let last = ticks();
  while (Date.now() - quietSince < 4_000 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = ticks();
    if (now !== last) quietSince = Date.now();
    last = now;
  }
  assert.ok(Date.now() - quietSince >= 4_000, "serve never went quiet for 4 s");
  // V8 writes its trace through buffered C stdio: it reaches the pipe when serve exits.
  await serve.stop();
  assert.match(serve.stdout(), /Scavenge|Mark-Compact/, "V8's GC trace reached serve's stdout");
  return serve.stdout().split("\n").filter((line) => /Mark-Compact.*testing/.test(line));
}

const TOKEN = { id: "t", envName: "AIC_IDLE_GC_TOKEN", value: "idle-gc-test-token-not-a-secret-0001" };

test("P-DNO-03 a Deno serve left quiet after start makes its own full collection (V8's trace shows the requested GC)", async (t) => {
  const serve = await startServe(t, { tokens: [TOKEN], runtime: "deno", extraEnv: { DENO_V8_FLAGS: "--trace-gc" } });
  const requested = await quietThenStop(serve);
  assert.ok(requested.length >= 1, `no requested collection in serve's GC trace: ${serve.stdout().slice(-400)}`);
});

test("P-DNO-03 a serve configured with limits.idleGc.enabled false makes no collection of its own when quiet", async (t) => {
  const serve = await startServe(t, { tokens: [TOKEN], runtime: "deno", limitSections: { idleGc: { enabled: false } }, extraEnv: { DENO_V8_FLAGS: "--trace-gc" } });
  const requested = await quietThenStop(serve);
  assert.deepEqual(requested, []);
});
