import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { runCli, spawnCli, waitReady, withDeadline } from "../support/processes.ts";
import { seedEveryTable } from "../support/seeded-store.ts";
import { tempDir } from "../support/temp.ts";

const TOKEN_CANARY = "tok-CANARY-3c7e19aa52";
const ROW_CANARY = "CANARY-ROW-d0e2f7b1";

function defaultDatabase(home: string): string {
  return join(home, ".lapis", "ai-controller", "instances", "default", "controller.sqlite");
}

function corrupt(path: string, sql: string): void {
  const db = new DatabaseSync(path);
  try {
    db.exec("PRAGMA ignore_check_constraints = ON");
    db.exec(sql);
  } finally {
    db.close();
  }
}

function writeConfig(path: string, config: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(config));
}

test("AIC-CLI-002a default config, workspace and database paths live under $HOME", async (t) => {
  const home = tempDir(t);
  const status = await runCli(t, "node", ["status", "--json"], { HOME: home });
  assert.equal(status.code, 0);
  const report = JSON.parse(status.stdout);
  assert.equal(report.config.path, join(home, ".config", "lapis-ai-controller", "config.json"));
  assert.equal(report.workspace, join(home, ".lapis", "ai-controller"));
  assert.equal(report.storage.path, defaultDatabase(home));
  assert.equal(report.instance, "default");
});

test("AIC-CLI-002a --config, --workspace and --instance each move their file; the env variable and config set the workspace", async (t) => {
  const home = tempDir(t);
  const other = tempDir(t);
  const configPath = join(other, "conf", "controller.json");
  writeConfig(configPath, { version: 1, workspace: join(other, "from-config") });
  const byConfig = JSON.parse((await runCli(t, "node", ["status", "--json", "--config", configPath], { HOME: home })).stdout);
  assert.equal(byConfig.config.path, configPath);
  assert.equal(byConfig.config.exists, true);
  assert.equal(byConfig.workspace, join(other, "from-config"));
  const byEnv = JSON.parse((await runCli(t, "node", ["status", "--json", "--config", configPath], { HOME: home, LAPIS_AI_CONTROLLER_WORKSPACE: join(other, "from-env") })).stdout);
  assert.equal(byEnv.workspace, join(other, "from-env"));
  const byFlag = JSON.parse((await runCli(t, "node", ["status", "--json", `--workspace=${join(other, "ws")}`, "--instance", "blue"], { HOME: home, LAPIS_AI_CONTROLLER_WORKSPACE: join(other, "from-env") })).stdout);
  assert.equal(byFlag.workspace, join(other, "ws"));
  assert.equal(byFlag.storage.path, join(other, "ws", "instances", "blue", "controller.sqlite"));
});

test("AIC-CLI-002d P-STO-01 status --json against a running serve reports lapis-ai-controller/1 and live pragmas, never token bytes", async (t) => {
  const home = tempDir(t);
  // Tokens are env: references (never literal in the file); the listener takes an ephemeral port.
  writeConfig(join(home, ".config", "lapis-ai-controller", "config.json"),
    { version: 1, tokens: [{ id: "owner", token: "env:AIC_TEST_OWNER_TOKEN" }], listen: { port: 0 } });
  const service = spawnCli(t, "deno", ["serve"], { HOME: home, AIC_TEST_OWNER_TOKEN: TOKEN_CANARY });
  await waitReady(service);
  for (const runtime of ["node", "deno"] as const) {
    const status = await runCli(t, runtime, ["status", "--json"], { HOME: home });
    assert.equal(status.code, 0);
    const report = JSON.parse(status.stdout);
    assert.equal(report.protocol, "lapis-ai-controller/1");
    assert.equal(report.service, "running");
    assert.equal(report.storage.journalMode, "wal");
    assert.equal(report.storage.synchronous, "full");
    assert.equal(report.storage.schemaVersion, 1);
    assert.equal(status.stdout.includes(TOKEN_CANARY) || status.stderr.includes(TOKEN_CANARY), false);
    const text = await runCli(t, runtime, ["status"], { HOME: home });
    assert.match(text.stdout, /protocol: +lapis-ai-controller\/1/);
    assert.equal(text.stdout.includes(TOKEN_CANARY), false);
  }
  service.child.kill("SIGTERM");
  assert.equal(await withDeadline(service.exited, 15_000, "serve stop"), 0);
  assert.equal(service.stdout().includes(TOKEN_CANARY) || service.stderr().includes(TOKEN_CANARY), false);
});

for (const runtime of ["node", "deno"] as const) {
  test(`P-STO-06 under ${runtime}: serve on a schema_version=999 database exits 1 with storage_version_unsupported, no canary in stderr or status`, async (t) => {
    const home = tempDir(t);
    const path = defaultDatabase(home);
    mkdirSync(dirname(path), { recursive: true });
    seedEveryTable(path);
    corrupt(path, `UPDATE schema_version SET version = 999; UPDATE threads SET config = json_object('note', '${ROW_CANARY}')`);
    const served = await runCli(t, runtime, ["serve"], { HOME: home });
    assert.equal(served.code, 1);
    assert.match(served.stderr, /error: storage_version_unsupported/);
    const status = await runCli(t, runtime, ["status", "--json"], { HOME: home });
    assert.equal(JSON.parse(status.stdout).storage.schemaVersion, 999);
    for (const out of [served.stdout, served.stderr, status.stdout, status.stderr]) assert.equal(out.includes(ROW_CANARY), false);
  });

  test(`P-STO-06 under ${runtime}: serve on a malformed row with a canary exits 1 with storage_record_invalid, no canary in stderr or status`, async (t) => {
    const home = tempDir(t);
    const path = defaultDatabase(home);
    mkdirSync(dirname(path), { recursive: true });
    seedEveryTable(path);
    corrupt(path, `UPDATE turns SET state = '${ROW_CANARY}'`);
    const served = await runCli(t, runtime, ["serve"], { HOME: home });
    assert.equal(served.code, 1);
    assert.match(served.stderr, /error: storage_record_invalid/);
    const status = await runCli(t, runtime, ["status", "--json"], { HOME: home });
    assert.equal(status.code, 0);
    for (const out of [served.stdout, served.stderr, status.stdout, status.stderr]) assert.equal(out.includes(ROW_CANARY), false);
  });
}

test("P-CLI-13 an unknown option or command exits 2 (usage), a missing option value exits 2", async (t) => {
  const home = tempDir(t);
  for (const args of [["status", "--bogus"], ["frobnicate"], ["serve", "--config"], ["status", "--instance", "../escape"]]) {
    const result = await runCli(t, "node", args, { HOME: home });
    assert.equal(result.code, 2, args.join(" "));
    assert.match(result.stderr, /error: usage_invalid/);
  }
});

test("P-STO-03 the config has no remote-database or spool option: unknown keys fail config_invalid (exit 2) naming the key only", async (t) => {
  const home = tempDir(t);
  const configPath = join(home, ".config", "lapis-ai-controller", "config.json");
  for (const key of ["remoteDatabase", "spool"]) {
    writeConfig(configPath, { version: 1, [key]: TOKEN_CANARY });
    const result = await runCli(t, "node", ["serve"], { HOME: home });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /error: config_invalid/);
    assert.equal(result.stderr.includes(TOKEN_CANARY), false);
  }
});

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  test(`P-STO-02 serve under deno stops cleanly on ${signal}: exit 0 and the lock is free for the next serve`, async (t) => {
    const home = tempDir(t);
    const first = spawnCli(t, "deno", ["serve"], { HOME: home });
    await waitReady(first);
    first.child.kill(signal);
    assert.equal(await withDeadline(first.exited, 15_000, "serve stop"), 0);
    assert.match(first.stderr(), new RegExp(`${signal}: stopped`));
    const status = JSON.parse((await runCli(t, "node", ["status", "--json"], { HOME: home })).stdout);
    assert.equal(status.service, "stopped");
  });
}
