// P-NET-02: every installed start of Deno runs with Deno's update check off
// (the runtime is pinned and replaced only by `install`; the check would reach
// dl.deno.land at every start): the launcher exports it before it execs Deno,
// whatever the caller's environment, and the systemd unit sets it.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { DENO_ENV, launcherScript } from "../../../src/cli/launcher.ts";
import { unitFile } from "../../../src/cli/service-unit.ts";
import { tempDir } from "../../support/temp.ts";

test("P-NET-02 the launcher runs Deno with DENO_NO_UPDATE_CHECK=1 from an environment without it, and passes the arguments on", (t) => {
  assert.deepEqual(DENO_ENV, { DENO_NO_UPDATE_CHECK: "1" });
  const dir = tempDir(t);
  // A stand-in for the Deno binary that reports what the launcher handed it.
  const deno = join(dir, "deno it's");
  writeFileSync(deno, "#!/bin/sh\nprintf '%s|' \"${DENO_NO_UPDATE_CHECK-unset}\" \"$@\"\n", { mode: 0o755 });
  const launcher = join(dir, "lapis-ai-controller");
  writeFileSync(launcher, launcherScript(deno, join(dir, "release"), "c".repeat(64)));
  chmodSync(launcher, 0o755);
  const run = spawnSync(launcher, ["status", "--json"], { env: { PATH: "/usr/bin:/bin" }, encoding: "utf8", timeout: 10_000 });
  assert.equal(run.status, 0, run.stderr);
  const [value, first, ...rest] = run.stdout.split("|");
  assert.equal(value, "1");
  assert.equal(first, "run");
  assert.deepEqual(rest.slice(-3), ["status", "--json", ""]);
});

test("P-NET-02 the systemd unit sets DENO_NO_UPDATE_CHECK=1 for serve", () => {
  const unit = unitFile({ deno: "/d/deno", releaseDir: "/r", digest: "b".repeat(64), instance: "default", configPath: "/c.json" });
  const service = unit.slice(unit.indexOf("[Service]"));
  assert.match(service, /^Environment=DENO_NO_UPDATE_CHECK=1$/m);
});
