// The bench's profile of a serve child through the inspector (P-PRF-17): a
// real child on the test's runtime with `--inspect=127.0.0.1:0` is sampled between start and
// stop, and the self-time summary names the function the child was busy in.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";
import { connectProfiler, inspectorUrl, selfTimes } from "../../../bench/lib/inspector-profile.ts";
import { evalModuleCommand } from "../../support/eval-module.ts";

const CHILD = `function spinForProfileTest() { const end = Date.now() + 20; let x = 0; while (Date.now() < end) x += Math.sqrt(x + 1); return x; }
setInterval(spinForProfileTest, 25);`;

test("P-PRF-17 the inspector address is read from a Node or a Deno child's stderr, loopback only", () => {
  assert.equal(inspectorUrl("Debugger listening on ws://127.0.0.1:41653/71f93747-fbf5-464c-84e6-02817d604bce\n"), "ws://127.0.0.1:41653/71f93747-fbf5-464c-84e6-02817d604bce");
  assert.equal(inspectorUrl("Debugger listening on ws://127.0.0.1:9229/ws/0a1b2c3d-0000-4000-8000-000000000000"), "ws://127.0.0.1:9229/ws/0a1b2c3d-0000-4000-8000-000000000000");
  assert.equal(inspectorUrl("Debugger listening on ws://0.0.0.0:9229/0a1b2c3d"), null);
  assert.equal(inspectorUrl("no inspector here"), null);
});

test("P-PRF-17 a child's main thread is profiled between start and stop and its busy function leads the self times", async (t) => {
  const { command, args, env } = evalModuleCommand(CHILD);
  // `node --inspect=… --input-type=module -e …` or `deno eval --inspect=… --ext=js …`; --jitless so
  // no optimizing compiler inlines the busy function into its timer's frame.
  const argv = typeof process.versions.deno === "string" ? [args[0] ?? "eval", "--inspect=127.0.0.1:0", "--v8-flags=--jitless", ...args.slice(1)] : ["--inspect=127.0.0.1:0", "--jitless", ...args];
  const child = spawn(command, argv, { env, stdio: ["ignore", "ignore", "pipe"] });
  t.after(() => { child.kill("SIGKILL"); });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const deadline = Date.now() + 10_000;
  while (inspectorUrl(stderr) === null) {
    assert.ok(Date.now() < deadline, "the child prints its inspector address");
    await new Promise((r) => setTimeout(r, 20));
  }
  const profiler = await connectProfiler(inspectorUrl(stderr) ?? "", 200);
  await profiler.start();
  await new Promise((r) => setTimeout(r, 600));
  const profile = await profiler.stop();
  profiler.close();
  assert.ok(profile.samples.length > 0 && profile.samples.length === profile.timeDeltas.length, `samples ${profile.samples.length}`);
  const self = selfTimes(profile);
  const spin = self.byFunction.find(([name]) => name.startsWith("spinForProfileTest "));
  assert.ok(spin !== undefined, `the busy function is in the summary: ${JSON.stringify(self.byFunction.slice(0, 5))}`);
  assert.ok(self.totalMs > 0 && spin[1] > 0.3 * self.totalMs, `the busy function leads: ${JSON.stringify(self.byFunction.slice(0, 3))}`);
  assert.ok(self.idleMs > 0, "idle time is counted apart from busy time");
  const files = self.byFile.reduce((sum, [, ms]) => sum + ms, 0);
  assert.ok(Math.abs(files - self.totalMs) < 1e-6, "the per-file sums add up to the busy total");
});
