// runPreflight's local probes: Pandoc (missing, too old, real) and the state
// database (directory missing, not a directory, unwritable, schema, run lock).

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { parse as parseToml, stringify } from "smol-toml";
import { runPreflight, type PreflightResult } from "../../../src/check/preflight.ts";
import type { AppConfig } from "../../../src/config/types.ts";
import { openStateStore } from "../../../src/state/store.ts";
import { CANARY_ENV, writeTestConfig } from "../../support/config.ts";
import { REPO } from "../../support/lisa-harness.ts";

async function only(name: "pandoc" | "database", config: AppConfig, pandocExecutable?: string): Promise<PreflightResult> {
  const results = await runPreflight(config, { only: [name], ...(pandocExecutable === undefined ? {} : { pandocExecutable }) });
  assert.equal(results.length, 1);
  const [result] = results;
  assert.ok(result !== undefined);
  return result;
}

function withDatabase(config: AppConfig, databasePath: string): AppConfig {
  return { ...config, runtime: { ...config.runtime, database_path: databasePath } };
}

describe("pandoc probe", () => {
  test("explains a missing Pandoc with the install hint", async () => {
    const { config } = writeTestConfig();
    const result = await only("pandoc", config, "lisa-no-such-pandoc");
    assert.equal(result.code, "pandoc_missing");
    assert.match(result.fix ?? "", /install Pandoc 2\.15 or newer \(apt-get install pandoc/);
  });

  test("explains a Pandoc older than 2.15 with its version", async () => {
    const { config, dir } = writeTestConfig();
    const fake = join(dir, "old-pandoc");
    writeFileSync(fake, "#!/bin/sh\necho 'pandoc 2.9.2.1'\necho 'Compiled with pandoc-types 1.20'\n", { mode: 0o755 });
    const result = await only("pandoc", config, fake);
    assert.equal(result.code, "pandoc_too_old");
    assert.match(result.fix ?? "", /^Pandoc 2\.9\.2\.1 is too old: 2\.15 or newer is required for --sandbox: install Pandoc 2\.15 or newer/);
  });

  test("explains a pandoc that prints no version", async () => {
    const { config, dir } = writeTestConfig();
    const fake = join(dir, "broken-pandoc");
    writeFileSync(fake, "#!/bin/sh\nexit 3\n", { mode: 0o755 });
    const result = await only("pandoc", config, fake);
    assert.equal(result.code, "pandoc_version_unreadable");
  });

  test("passes with the installed Pandoc and names its version", async () => {
    const { config } = writeTestConfig();
    const result = await only("pandoc", config);
    assert.equal(result.ok, true, result.fix);
    assert.match(result.detail ?? "", /^pandoc \d+\.\d+/);
  });
});

describe("database probe", () => {
  test("passes for a writable directory without leaving a file behind", async () => {
    const { config, dir } = writeTestConfig();
    const before = readdirSync(dir).sort();
    const result = await only("database", config);
    assert.equal(result.ok, true, result.fix);
    assert.match(result.detail ?? "", /is writable; the database will be created at the first start$/);
    assert.deepEqual(readdirSync(dir).sort(), before);
  });

  test("explains a missing directory", async () => {
    const { config, dir } = writeTestConfig();
    const result = await only("database", withDatabase(config, join(dir, "absent", "state.sqlite3")));
    assert.equal(result.code, "database_dir_missing");
    assert.match(result.fix ?? "", /does not exist: create it .*chown lisa:lisa/);
  });

  test("explains a path whose directory is a file", async () => {
    const { config, dir } = writeTestConfig();
    const result = await only("database", withDatabase(config, join(dir, "persona.md", "state.sqlite3")));
    assert.equal(result.code, "database_dir_unusable");
  });

  test("explains a directory this user cannot write", async () => {
    const { dir, path } = writeTestConfig();
    chmodSync(dir, 0o755);
    const locked = join(dir, "locked");
    mkdirSync(locked);
    chmodSync(locked, 0o555);
    // The config loads with its own (writable) directory; the probe is pointed at the locked one.
    const open = join(dir, "open");
    mkdirSync(open);
    chmodSync(open, 0o777);
    const result = await probeInChild(path, join(open, "state.sqlite3"), join(locked, "state.sqlite3"));
    assert.equal(result.code, "database_dir_unwritable");
    assert.match(result.fix ?? "", new RegExp(`^${locked} is not writable by this user \\(uid \\d+\\) \\(EACCES\\): the service user must own it`));
  });

  test("passes for an existing database of a stopped service", async () => {
    const { config } = writeTestConfig();
    const created = openStateStore(config.runtime.database_path, { mode: "run" });
    assert.ok(created.ok);
    created.value.close();
    const result = await only("database", config);
    assert.equal(result.ok, true, result.fix);
    assert.match(result.detail ?? "", /schema current; Lisa is not running$/);
  });

  test("treats a held run lock as a running service, not a failure", async () => {
    const { config } = writeTestConfig();
    const running = openStateStore(config.runtime.database_path, { mode: "run" });
    assert.ok(running.ok);
    try {
      const result = await only("database", config);
      assert.equal(result.ok, true, result.fix);
      assert.match(result.detail ?? "", /Lisa appears to be running \(database locked\)$/);
    } finally {
      running.value.close();
    }
  });

  test("fails on a database written by a newer Lisa", async () => {
    const { config } = writeTestConfig();
    const created = openStateStore(config.runtime.database_path, { mode: "run" });
    assert.ok(created.ok);
    created.value.close();
    const db = new DatabaseSync(config.runtime.database_path);
    db.prepare("INSERT INTO schema_migrations(version, applied_at_ms) VALUES (?, ?)").run(9_999, 0);
    db.close();
    const result = await only("database", config);
    assert.equal(result.code, "state_schema_newer");
    assert.match(result.fix ?? "", /written by a newer Lisa: install that release again, or restore the backup/);
  });
});

/**
 * Runs the database probe in a child process, as an unprivileged user when
 * this test runs as root (root bypasses directory modes).
 */
function probeInChild(configPath: string, loadableDb: string, probedDb: string): Promise<PreflightResult> {
  const tables = parseToml(readFileSync(configPath, "utf8")) as Record<string, Record<string, unknown>>;
  const copy = `${configPath}.child.toml`;
  writeFileSync(copy, stringify({ ...tables, runtime: { ...tables["runtime"], database_path: loadableDb } }), { mode: 0o644 });
  const module = pathToFileURL(join(REPO, "src/check/preflight.ts")).href;
  const loader = pathToFileURL(join(REPO, "src/config/load.ts")).href;
  const code = `
    import { runPreflight } from ${JSON.stringify(module)};
    import { loadConfig } from ${JSON.stringify(loader)};
    const [configPath, probedDb] = process.argv.slice(1);
    const loaded = loadConfig(configPath);
    if (!loaded.ok) throw new Error(loaded.error.problems.join("; "));
    const config = { ...loaded.value, runtime: { ...loaded.value.runtime, database_path: probedDb } };
    const [result] = await runPreflight(config, { only: ["database"] });
    process.stdout.write(JSON.stringify(result));
  `;
  const asRoot = process.getuid?.() === 0;
  return new Promise((resolve, reject) => {
    const child = spawn(join(REPO, "node_modules/.bin/node"), ["--input-type=module", "-e", code, copy, probedDb], {
      cwd: REPO,
      env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", ...CANARY_ENV },
      stdio: ["ignore", "pipe", "pipe"],
      ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (status) => {
      if (status !== 0) reject(new Error(`probe child exited ${status}: ${stderr}`));
      else resolve(JSON.parse(stdout) as PreflightResult);
    });
  });
}
