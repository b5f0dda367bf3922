// P-NET-01: tests and the bench reach 127.0.0.1 only. A real scenario (the
// Deno runtime, the real codex app-server and codex-acp on the tests' CODEX_HOME,
// one turn each against the scripted Responses-API stand-in) runs under
// strace; every inet address any process of it connects or sends to must be
// loopback. Before the fix, Deno's update check resolved dl.deno.land and
// Codex's plugin sync resolved api.github.com, chatgpt.com and github.com
// (`git ls-remote https://github.com/openai/plugins.git`).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { DENO_CHILD_ENV } from "../support/deno-env.ts";
import { DENO, PACKAGE_ROOT } from "../support/processes.ts";
import { tempDir } from "../support/temp.ts";

const SCENARIO = join(PACKAGE_ROOT, "test", "support", "no-phone-home-scenario.ts");
const FLAGS = ["--allow-read", "--allow-write", "--allow-env", "--allow-sys", "--allow-run", "--allow-net=127.0.0.1"];

/** The inet addresses of a strace line (`inet_addr("a.b.c.d")`, `inet_pton(AF_INET6, "x", ...)`). */
function inetAddresses(line: string): string[] {
  return [...line.matchAll(/inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)"/g)].map((m) => m[1] ?? m[2] ?? "");
}

test("P-NET-01 the Deno runtime, codex app-server and codex-acp on the tests' CODEX_HOME reach only 127.0.0.1 (no DNS, no update check, no plugin sync)", { timeout: 240_000 }, (t) => {
  const dir = tempDir(t);
  const home = join(dir, "home");
  mkdirSync(home);
  const trace = join(dir, "strace.txt");
  // A fresh HOME is a fresh DENO_DIR: without DENO_NO_UPDATE_CHECK Deno checks for an update on this start.
  const run = spawnSync("strace", ["-f", "-qq", "-e", "trace=connect,sendto,sendmsg,sendmmsg", "-s", "64", "-o", trace, DENO, "run", ...FLAGS, SCENARIO, join(dir, "scenario")], {
    cwd: PACKAGE_ROOT,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, NO_COLOR: "1", ...DENO_CHILD_ENV },
    encoding: "utf8",
    timeout: 200_000,
  });
  assert.equal(run.error, undefined, `strace ran (it is a test dependency): ${String(run.error)}`);
  assert.equal(run.status, 0, run.stderr.slice(-2000));
  const outcome = JSON.parse(run.stdout.trim().split("\n").pop() ?? "{}") as { native?: string; acp?: string; requests?: number };
  assert.deepEqual(outcome, { native: "completed", acp: "end_turn", requests: 2 });
  const lines = readFileSync(trace, "utf8").split("\n");
  const inet = lines.filter((l) => inetAddresses(l).length > 0);
  assert.ok(inet.some((l) => l.includes("connect(") && inetAddresses(l).includes("127.0.0.1")), "the trace holds the agents' connections to the model on 127.0.0.1");
  const off = inet.filter((l) => inetAddresses(l).some((a) => a !== "127.0.0.1" && a !== "::1" && a !== "::ffff:127.0.0.1"));
  assert.deepEqual(off, [], "no process connected or sent to an address off the loopback (DNS included)");
});
