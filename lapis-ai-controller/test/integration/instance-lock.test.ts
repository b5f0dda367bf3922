import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { openSqliteStore } from "../../src/persistence/sqlite-store.ts";
import { runCli, spawnCli, waitReady, withDeadline, type Runtime } from "../support/processes.ts";
import { tempDir } from "../support/temp.ts";

test("P-STO-02 a second store on the same database in the same process fails instance_locked", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  const first = openSqliteStore({ path });
  assert.ok(first.ok);
  t.after(() => first.value.close());
  const second = openSqliteStore({ path, lockWaitMs: 0 });
  assert.deepEqual(second.ok ? null : second.error, { code: "instance_locked", retryable: false });
});

const PAIRS: ReadonlyArray<readonly [Runtime, Runtime]> = [["deno", "node"], ["node", "deno"]];

for (const [holder, contender] of PAIRS) {
  test(`P-STO-02 P-ARC-09 a second serve under ${contender} exits instance_locked while a ${holder} serve keeps serving`, async (t) => {
    const home = tempDir(t);
    const env = { HOME: home };
    const first = spawnCli(t, holder, ["serve"], env);
    const ready = await waitReady(first);
    assert.equal(ready.protocol, "lapis-ai-controller/1");
    assert.equal(ready.runtime, holder);
    const second = await runCli(t, contender, ["serve"], env);
    assert.equal(second.code, 1);
    assert.match(second.stderr, /error: instance_locked/);
    assert.equal(first.child.exitCode, null, "the first serve is still running");
    const status = await runCli(t, contender, ["status", "--json"], env);
    assert.equal(JSON.parse(status.stdout).service, "running");
    first.child.kill("SIGTERM");
    assert.equal(await withDeadline(first.exited, 15_000, "first serve stop"), 0);
  });
}

for (const runtime of ["node", "deno"] as const) {
  test(`P-STO-02 the lock dies with a SIGKILLed ${runtime} holder: a new serve then starts`, async (t) => {
    const home = tempDir(t);
    const env = { HOME: home };
    const holder = spawnCli(t, runtime, ["serve"], env);
    await waitReady(holder);
    holder.child.kill("SIGKILL");
    assert.equal(await withDeadline(holder.exited, 15_000, "holder death"), "SIGKILL");
    const next = spawnCli(t, runtime === "node" ? "deno" : "node", ["serve"], env);
    const ready = await waitReady(next);
    assert.equal(ready.ready, true);
    next.child.kill("SIGINT");
    assert.equal(await withDeadline(next.exited, 15_000, "next serve stop"), 0);
  });
}
