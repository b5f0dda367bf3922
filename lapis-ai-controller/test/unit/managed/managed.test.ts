// Unit tests of the managed process client (src/managed.ts): executable
// resolution, the allowlisted environment, the 60 s readiness default on a
// test clock, and that stdin is written once and never waited on.
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { childEnvironment, DEFAULT_READINESS_MS, resolveExecutable, startManagedController } from "../../../src/managed.ts";
import { tempDir } from "../../support/temp.ts";

const TOKEN = "CANARYtok-managed-unit-4b8e2f6a1d3c";

function script(dir: string, name: string, body: string): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

test("P-SDK-09 a bare executable name resolves from PATH, then $HOME/.local/bin", (t) => {
  const dir = tempDir(t);
  const onPath = script(join(dir, "path-bin"), "lapis-ai-controller", "exit 0");
  const home = join(dir, "home");
  const inHome = script(join(home, ".local", "bin"), "lapis-ai-controller", "exit 0");
  assert.equal(resolveExecutable("lapis-ai-controller", join(dir, "path-bin"), home), onPath);
  assert.equal(resolveExecutable("lapis-ai-controller", join(dir, "empty"), home), inHome);
  assert.equal(resolveExecutable("lapis-ai-controller", join(dir, "empty"), join(dir, "nohome")), null);
  assert.equal(resolveExecutable("/abs/x", "", undefined), "/abs/x");
  assert.equal(resolveExecutable("rel/x", "/usr/bin", home), null, "a relative path with a slash is refused");
});

test("P-SDK-10 the child environment is the caller's allowlist plus PATH and HOME; a token value in it is refused", () => {
  assert.deepEqual(childEnvironment({ token: TOKEN, databasePath: "/x", env: { CODEX_HOME: "/c" }, path: "/bin", home: "/h" }), { CODEX_HOME: "/c", PATH: "/bin", HOME: "/h" });
  assert.equal(childEnvironment({ token: TOKEN, databasePath: "/x", env: { LEAK: `x${TOKEN}` }, path: "/bin", home: "/h" }), null);
  assert.equal(childEnvironment({ token: TOKEN, databasePath: "/x", env: { "BAD-NAME": "v" } }), null);
});

test("P-SDK-10 a relative database path is rejected before anything spawns", async () => {
  const r = await startManagedController({ token: TOKEN, databasePath: "relative/db.sqlite", executable: "/nonexistent" });
  assert.deepEqual(r, { ok: false, error: { code: "invalid_params", cause: "databasePath" } });
});

test("P-SDK-07 a child that never reports fails readiness_timeout at the default 60 s (test clock)", async (t) => {
  const dir = tempDir(t);
  const exe = script(dir, "silent", "exec sleep 30");
  const waits: number[] = [];
  let fire: (() => void) | undefined;
  const timers = {
    setTimeout: (fn: () => void, ms: number) => {
      waits.push(ms);
      fire = fn;
      return 1;
    },
    clearTimeout: () => undefined,
  };
  const started = startManagedController({ token: TOKEN, databasePath: join(dir, "db.sqlite"), executable: exe, timers, path: "/usr/bin:/bin", home: dir });
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual(waits, [DEFAULT_READINESS_MS]);
  assert.equal(DEFAULT_READINESS_MS, 60_000);
  (fire as () => void)();
  assert.deepEqual(await started, { ok: false, error: { code: "readiness_timeout" } });
});

test("P-SDK-04 P-SDK-06 P-CLI-07 readiness arrives from a child that never reads stdin to EOF, the client registers no finish/close wait, and a wrong expected build is build_mismatch", async (t) => {
  const dir = tempDir(t);
  // Reads exactly one line, reports ready (without the token), then sleeps with stdin still open.
  const exe = script(dir, "child", `read -r line; case "$line" in *'"token"'*) ;; *) exit 9;; esac; echo '{"ready":true,"url":"ws://127.0.0.1:1/","build":"b1"}'; exec sleep 30`);
  const r = await startManagedController({ token: TOKEN, databasePath: join(dir, "db.sqlite"), executable: exe, path: "/usr/bin:/bin", home: dir, readinessTimeoutMs: 20_000 });
  assert.ok(r.ok);
  t.after(() => r.value.stop());
  assert.equal(r.value.build, "b1");
  assert.ok(!JSON.stringify(r.value.readiness).includes(TOKEN));
  const mismatch = await startManagedController({ token: TOKEN, databasePath: join(dir, "db.sqlite"), executable: exe, path: "/usr/bin:/bin", home: dir, expectedBuild: "b2" });
  assert.deepEqual(mismatch, { ok: false, error: { code: "build_mismatch" } });
  const source = readFileSync(resolve(import.meta.dirname, "../../../src/managed.ts"), "utf8");
  assert.ok(!/stdin\??\.(on|once)\(\s*["'](finish|close|end)["']/.test(source), "no stdin finish/close/end listener");
  assert.ok(!/stdin\??\.end\(/.test(source), "stdin is never ended");
  assert.ok(!/finished\(|once\(child\.stdin/.test(source));
});

test("P-SDK-08 a child that fails before readiness gives managed_start_failed with its cause code and no token", async (t) => {
  const dir = tempDir(t);
  const exe = script(dir, "failing", `read -r line; echo '{"ready":false,"error":"storage_unavailable"}'; echo 'lapis-ai-controller: error: storage_unavailable' >&2; exit 1`);
  const r = await startManagedController({ token: TOKEN, databasePath: join(dir, "db.sqlite"), executable: exe, path: "/usr/bin:/bin", home: dir });
  assert.deepEqual(r, { ok: false, error: { code: "managed_start_failed", cause: "storage_unavailable" } });
  const exits = script(dir, "exits", `echo 'lapis-ai-controller: error: instance_locked' >&2; exit 1`);
  const gone = await startManagedController({ token: TOKEN, databasePath: join(dir, "db.sqlite"), executable: exits, path: "/usr/bin:/bin", home: dir });
  assert.deepEqual(gone, { ok: false, error: { code: "managed_start_failed", cause: "instance_locked" } });
  assert.ok(!JSON.stringify([r, gone]).includes(TOKEN));
  const missing = await startManagedController({ token: TOKEN, databasePath: join(dir, "db.sqlite"), executable: "lapis-ai-controller", path: join(dir, "none"), home: join(dir, "nohome") });
  assert.deepEqual(missing, { ok: false, error: { code: "managed_start_failed", cause: "executable_not_found" } });
});

test("P-SDK-12 the managed request schema is strict: no Nostr signing or vault credential fields, absolute DB path, valid token", async () => {
  const { parseManagedRequest } = await import("../../../src/cli/managed-serve.ts");
  const base = { protocol: "lapis-ai-controller/1", token: TOKEN, databasePath: "/abs/db.sqlite" };
  const okReq = parseManagedRequest(JSON.stringify({ ...base, providers: { p: { agent: "codex" } }, workspaces: { w: "/w" } }));
  assert.ok(!("error" in okReq));
  assert.deepEqual(okReq.sections, { listen: { host: "127.0.0.1", port: 0 }, providers: { p: { agent: "codex" } }, workspaces: { w: "/w" } });
  for (const key of ["nostrSigner", "nostrSecretKey", "vaultKey", "vaultPassword", "env"]) {
    assert.deepEqual(parseManagedRequest(JSON.stringify({ ...base, [key]: "x" })), { error: `request.${key}` }, key);
  }
  assert.deepEqual(parseManagedRequest(JSON.stringify({ ...base, databasePath: "rel.sqlite" })), { error: "request.databasePath" });
  assert.deepEqual(parseManagedRequest(JSON.stringify({ ...base, token: "short" })), { error: "request.token" });
  assert.deepEqual(parseManagedRequest(JSON.stringify({ ...base, protocol: "lapis-ai-controller/2" })), { error: "request.protocol" });
  assert.deepEqual(parseManagedRequest("not json"), { error: "request" });
  assert.ok(!JSON.stringify(parseManagedRequest(JSON.stringify({ ...base, bogus: TOKEN }))).includes(TOKEN), "errors name keys, never values");
});
