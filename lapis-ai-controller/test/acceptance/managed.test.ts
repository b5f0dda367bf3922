// Acceptance of the managed child (P-SDK-04..11, P-CLI-07): Node starts the
// INSTALLED controller through startManagedController(); the token travels
// only on stdin, readiness carries the release digest, a wrong expected build
// fails, and start failures carry the cause without credentials.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { startManagedController } from "../../src/managed.ts";
import { homeDir, installCli } from "../support/installed-cli.ts";

const TOKEN = "CANARYtok-managed-accept-8d1f4a7c2e6b9053";

test("P-SDK-04 P-SDK-05 P-SDK-08/09/10/11 P-CLI-07 the installed CLI as a managed child: token only on stdin, ready within 60 s with the build, wrong build and bad DB path fail", { timeout: 300_000 }, async (t) => {
  const home = homeDir(t);
  const r = installCli(home);
  assert.equal(r.code, 0, r.stderr);
  const digest = (JSON.parse(r.stdout.trim().split("\n").at(-1) as string) as { digest: string }).digest;
  const base = { token: TOKEN, home, path: "/usr/bin:/bin", env: { LANG: "C.UTF-8" } };

  const started = Date.now();
  // P-SDK-09: PATH lacks the launcher; the bare name resolves from $HOME/.local/bin.
  const managed = await startManagedController({ ...base, databasePath: join(home, "managed", "controller.sqlite"), expectedBuild: digest });
  assert.ok(managed.ok, JSON.stringify(managed));
  t.after(() => managed.value.stop());
  assert.ok(Date.now() - started < 60_000, "ready within the 60 s default");
  assert.equal(managed.value.build, digest, "P-CLI-07 readiness carries the release digest");
  assert.equal(managed.value.readiness.managed, true);
  assert.ok(!JSON.stringify(managed.value.readiness).includes(TOKEN), "P-SDK-11 no token in the readiness line");
  const pid = managed.value.pid;
  const cmdline = readFileSync(`/proc/${pid}/cmdline`, "latin1");
  const environ = readFileSync(`/proc/${pid}/environ`, "latin1");
  assert.match(cmdline, /deno\0run\0/, "the launcher exec'd Deno in the same process");
  assert.ok(!cmdline.includes(TOKEN), "token not in argv");
  assert.ok(!environ.includes(TOKEN), "token not in the environment");
  // P-SDK-10: the environment is the allowlist plus PATH and HOME (and PWD, which the launcher's /bin/sh sets,
  // and DENO_NO_UPDATE_CHECK=1, which the launcher exports: P-NET-02).
  const vars = environ.split("\0").filter(Boolean);
  assert.deepEqual(vars.map((kv) => kv.split("=")[0]).sort(), ["DENO_NO_UPDATE_CHECK", "HOME", "LANG", "PATH", "PWD"]);
  assert.ok(vars.includes("DENO_NO_UPDATE_CHECK=1"));
  const client = await managed.value.connect();
  assert.equal(client.hello.protocol, "lapis-ai-controller/1", "the stdin token authenticates");
  client.close();
  await managed.value.stop();

  const wrong = await startManagedController({ ...base, databasePath: join(home, "managed", "controller.sqlite"), expectedBuild: "0".repeat(64) });
  assert.deepEqual(wrong, { ok: false, error: { code: "build_mismatch" } });
  // P-SDK-08: a database path that cannot be created gives the cause code, no token.
  const bad = await startManagedController({ ...base, databasePath: "/proc/self/no-such-dir/controller.sqlite" });
  assert.equal(bad.ok, false);
  assert.equal(!bad.ok && bad.error.code, "managed_start_failed");
  assert.match(String(!bad.ok && bad.error.cause), /^storage_[a-z_]+$/);
  assert.ok(!JSON.stringify(bad).includes(TOKEN));
});
