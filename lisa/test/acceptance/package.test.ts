// Issue 26 point 4, the README's release path on a clean clone: `npm ci`,
// `npm pack` (whose prepack builds dist/), `npm install -g` of the tarball
// into a temporary prefix, then the installed `lisa --version` and
// `lisa check --offline`. On a Node older than 24 the installed command says
// in one line what it needs and exits 1, before anything else is loaded.

import assert from "node:assert/strict";
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { writeTestConfig } from "../support/config.ts";
import { REPO } from "../support/lisa-harness.ts";

const NODE24 = join(REPO, "node_modules/.bin/node");
const STEP_TIMEOUT_MS = 300_000;
const FAKE_OLD_VERSION = "v20.0.0";

function run(command: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): SpawnSyncReturns<string> {
  const result = spawnSync(command, args, { encoding: "utf8", timeout: STEP_TIMEOUT_MS, cwd: options.cwd, env: options.env ?? process.env });
  if (result.error !== undefined) throw result.error;
  return result;
}

function ok(result: SpawnSyncReturns<string>, what: string): string {
  assert.equal(result.status, 0, `${what} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** PATH with `nodeDir` first, so the installed command's `#!/usr/bin/env node` finds that Node. */
function pathWith(nodeDir: string): string {
  return [nodeDir, ...(process.env["PATH"] ?? "/usr/bin:/bin").split(delimiter)].join(delimiter);
}

/** A Node older than 24 on this machine's PATH (outside the repository), if there is one. */
function olderNode(): string | null {
  for (const dir of (process.env["PATH"] ?? "").split(delimiter)) {
    const candidate = join(dir, "node");
    if (dir === "" || dir.startsWith(REPO) || !existsSync(candidate)) continue;
    const version = spawnSync(candidate, ["--version"], { encoding: "utf8" }).stdout.trim();
    const major = Number(/^v(\d+)\./.exec(version)?.[1] ?? NaN);
    if (major < 24) return candidate;
  }
  return null;
}

/** Static `import ... from "x"` specifiers of a built module (dynamic `import()` excluded). */
function staticImports(file: string): string[] {
  return [...readFileSync(file, "utf8").matchAll(/^\s*(?:import|export)\s[^"'()]*?from\s*["']([^"']+)["']|^\s*import\s*["']([^"']+)["']/gm)]
    .map((m) => m[1] ?? m[2] ?? "");
}

describe("LISA-PACKAGE-01: the package installs from a clean clone and runs", () => {
  let root: string;
  let installed: string;
  let packageDir: string;

  before(() => {
    root = mkdtempSync(join(tmpdir(), "lisa-package-"));
    const clone = join(root, "clone");
    const head = ok(run("git", ["-C", REPO, "rev-parse", "HEAD"]), "git rev-parse").trim();
    ok(run("git", ["clone", "--quiet", "--no-checkout", join(REPO, ".."), clone]), "git clone");
    ok(run("git", ["-C", clone, "checkout", "--quiet", head]), "git checkout");
    const lisaDir = join(clone, "lisa");
    ok(run("npm", ["ci", "--prefer-offline", "--no-audit", "--no-fund"], { cwd: lisaDir }), "npm ci");
    assert.equal(existsSync(join(lisaDir, "dist")), false, "a clean clone has no dist/");
    const packed = JSON.parse(ok(run("npm", ["pack", "--json", "--pack-destination", root], { cwd: lisaDir }), "npm pack")) as { filename: string; files: { path: string }[] }[];
    const tarball = packed[0];
    assert.ok(tarball !== undefined);
    const files = tarball.files.map((f) => f.path);
    for (const file of ["dist/bin.js", "dist/main.js", "dist/cli/node-version.js", "package.json"]) assert.ok(files.includes(file), `${file} is packed`);
    const prefix = join(root, "prefix");
    ok(run("npm", ["install", "-g", "--prefix", prefix, "--prefer-offline", "--no-audit", "--no-fund", join(root, tarball.filename)]), "npm install -g");
    installed = join(prefix, "bin", "lisa");
    packageDir = join(prefix, "lib", "node_modules", "lisa-matrix-bot");
    assert.ok(existsSync(installed), "npm install -g made a lisa command");
  });

  after(() => {
    if (root !== undefined) rmSync(root, { recursive: true, force: true });
  });

  test("the installed lisa --version and lisa check --offline work on Node 24", () => {
    const env = { ...process.env, PATH: pathWith(dirname(NODE24)) };
    const version = readFileSync(join(REPO, "package.json"), "utf8").match(/"version": "([^"]+)"/)?.[1];
    assert.equal(ok(run(installed, ["--version"], { env }), "lisa --version").trim(), `lisa ${version}`);
    const config = writeTestConfig();
    const check = run(installed, ["check", "--offline", "--config", config.path], { env: { ...env, ...config.env } });
    assert.equal(check.status, 0, check.stderr);
    assert.equal(check.stdout, "configuration: ok\n");
  });

  test("the entry loads nothing but the version guard before the check", () => {
    assert.deepEqual(staticImports(join(packageDir, "dist/bin.js")), ["./cli/node-version.js"]);
    assert.deepEqual(staticImports(join(packageDir, "dist/cli/node-version.js")), [], "the guard imports nothing");
  });

  test("on an older Node the installed lisa says in one line that it needs Node 24, and exits 1", () => {
    // Node 24 reporting an old version: the guard's message and exit status.
    const preload = join(root, "old-node-version.mjs");
    writeFileSync(preload, `Object.defineProperty(process, "version", { value: ${JSON.stringify(FAKE_OLD_VERSION)} });\n`);
    const faked = run(installed, ["--version"], { env: { ...process.env, PATH: pathWith(dirname(NODE24)), NODE_OPTIONS: `--import=${preload}` } });
    assert.equal(faked.status, 1);
    assert.equal(faked.stdout, "");
    assert.equal(faked.stderr, `lisa: needs Node.js 24 or newer, but this is Node.js ${FAKE_OLD_VERSION}\n`);
    // A real older Node, where one is installed (this machine's system Node 20): nothing Node-24-only was loaded first.
    const older = olderNode();
    console.log(`package: older node on PATH: ${older ?? "none"}`);
    if (older !== null) {
      const oldVersion = spawnSync(older, ["--version"], { encoding: "utf8" }).stdout.trim();
      for (const args of [["--version"], ["check", "--offline", "--config", "/nonexistent.toml"]]) {
        const real = run(installed, args, { env: { ...process.env, PATH: pathWith(dirname(older)) } });
        assert.equal(real.status, 1, real.stderr);
        assert.equal(real.stderr, `lisa: needs Node.js 24 or newer, but this is Node.js ${oldVersion}\n`);
        assert.equal(real.stdout, "");
      }
    }
  });
});
