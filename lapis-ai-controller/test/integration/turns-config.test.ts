// Engine configuration at serve startup, black-box: P-ARC-18 / P-API-13
// (workspace_alias) and P-PRV-04 (an invalid vcsIdentity fails validation).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { tempDir } from "../support/temp.ts";

const PACKAGE = resolve(import.meta.dirname, "../..");

function serveWith(dir: string, sections: Record<string, unknown>) {
  const config = join(dir, "config.json");
  writeFileSync(config, JSON.stringify({ version: 1, ...sections }), { mode: 0o600 });
  return spawnSync(join(PACKAGE, "node_modules/.bin/node"), [join(PACKAGE, "src/main.ts"), "serve", "--config", config, "--workspace", join(dir, "controller")], {
    env: { HOME: dir, PATH: process.env.PATH ?? "/usr/bin:/bin" }, encoding: "utf8", timeout: 30_000,
  });
}

test("P-ARC-18 P-API-13 serve refuses two workspace ids for one physical directory (workspace_alias)", (t) => {
  const dir = tempDir(t, "aic-alias-");
  mkdirSync(join(dir, "real"));
  symlinkSync(join(dir, "real"), join(dir, "link"));
  const r = serveWith(dir, { workspaces: { a: join(dir, "real"), b: join(dir, "link") }, providers: { p: { command: ["/bin/true"] } } });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /workspace_alias/);
  assert.equal(r.stdout.includes('"ready":true'), false);
});

test("P-PRV-04 serve refuses a vcsIdentity with control characters (config_invalid)", (t) => {
  const dir = tempDir(t, "aic-vcs-");
  mkdirSync(join(dir, "ws"));
  const r = serveWith(dir, { workspaces: { w: join(dir, "ws") }, providers: { p: { command: ["/bin/true"], vcsIdentity: { name: "Ann\u0007", email: "ann@example.org" } } } });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /config_invalid/);
});
