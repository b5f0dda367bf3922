// `lisa check` as a child process against the fake homeserver, the scripted
// LLM and the fake SearXNG: one line per probe, the fix for each failure
// kind, exit 0 or 78, no room traffic, and never a secret in the output.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { parse as parseToml, stringify } from "smol-toml";
import { CANARY, CANARY_ENV, writeTestConfig } from "../../support/config.ts";
import { startFakeHomeserver } from "../../support/fake-homeserver.ts";
import { startFakeSearxng } from "../../support/fake-searxng.ts";
import { LISA, REPO, createWorld, type World, type WorldOptions } from "../../support/lisa-harness.ts";
import { errorReply, startScriptedLlm, textReply } from "../../support/scripted-llm.ts";

interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node src/main.ts ...args` with only PATH and `env`; killed after 60 s so a hang fails the test. */
function runLisa(args: readonly string[], env: Record<string, string> = {}, spawnAs?: { uid: number; gid: number }): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(REPO, "node_modules/.bin/node"), [join(REPO, "src/main.ts"), ...args], {
      cwd: REPO,
      env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", ...env },
      stdio: ["ignore", "pipe", "pipe"],
      ...(spawnAs === undefined ? {} : spawnAs),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const killer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
  });
}

function assertNoSecrets(run: CliRun): void {
  for (const canary of Object.values(CANARY)) {
    assert.ok(!run.stdout.includes(canary) && !run.stderr.includes(canary), "a canary secret appeared in the output");
  }
}

function assertNoRoomTraffic(world: World): void {
  const endpoints = new Set(world.hs.requests().map((r) => r.endpoint));
  for (const forbidden of ["send", "typing", "sync"] as const) {
    assert.equal(world.hs.requests(forbidden).length, 0, `lisa check must not call ${forbidden}`);
  }
  // The per-room diagnosis (LISA-ROOMS-01) only reads: joined rooms, room state, the directory.
  const reads = ["login", "whoami", "joined_rooms", "state", "directory", "logout"];
  assert.deepEqual([...endpoints].filter((e) => !reads.includes(e)), []);
  // One login at most, on the check's own device, and that device logged out again (LISA-CHECK-01).
  assert.ok(world.hs.loginCount <= 1, `${world.hs.loginCount} logins`);
  assert.equal(world.hs.requests("logout").length, world.hs.loginCount, "a check that logged in logs its device out");
  assert.deepEqual(world.hs.devices(LISA), [], "no device is left behind, and Lisa's own device was never created");
}

/** Runs `lisa check` against a fresh world, closing it afterwards. */
async function checkWorld(options: WorldOptions, prepare?: (world: World) => void | Promise<void>): Promise<{ run: CliRun; world: World }> {
  const world = await createWorld({ llmScript: () => textReply("OK"), ...options });
  try {
    await prepare?.(world);
    const run = await runLisa(["check", "--config", world.configPath], world.env);
    assertNoSecrets(run);
    assertNoRoomTraffic(world);
    return { run, world };
  } finally {
    await world.close();
  }
}

function failureLine(run: CliRun, name: string): string {
  const line = run.stderr.split("\n").find((l) => l.startsWith(`${name}: FAILED`));
  assert.ok(line !== undefined, `expected a failure line for ${name}; stderr: ${run.stderr}`);
  return line;
}

function okNames(run: CliRun): string[] {
  return run.stdout.split("\n").filter((l) => / ok( |$)/.test(l) && !l.startsWith("room ")).map((l) => l.slice(0, l.indexOf(":")));
}

describe("lisa check", () => {
  test("passes with one ok line per check when every service is healthy, and sends nothing to any room", async () => {
    const { run, world } = await checkWorld({});
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(okNames(run), ["configuration", "matrix", "llm", "search", "pandoc", "database"]);
    assert.equal(run.stderr, "");
    assert.match(run.stdout, /matrix: ok \(logged in as @lisa:localhost on device LISATEST_CHECK; note: the check used a device of its own \(LISATEST_CHECK\), which it logs out when it ends; Lisa's device LISATEST and its token are left alone\)/);
    // One login, shared by the Matrix probe and the per-room diagnosis (issues 18, 24).
    assert.equal(world.hs.loginCount, 1);
    assert.equal(world.hs.requests("whoami").length, 1);
    assert.equal(world.hs.requests("logout").length, 1);
    assert.match(run.stdout, /^room !room1:localhost: ok \(joined; not encrypted; can send messages and typing notifications/m);
    assert.equal(world.llm.requests.length, 1, "one probe completion");
    const probe = world.llm.requests[0];
    assert.equal(probe?.headers.authorization, `Bearer ${CANARY.llmKey}`, "the key travels only as a bearer header");
    assert.ok(!probe?.path.includes(CANARY.llmKey));
    const body = probe?.body as { tools?: unknown[]; max_tokens?: number; model?: string };
    assert.equal(body.model, "test-model");
    assert.equal(body.tools?.length, 1);
    assert.ok((body.max_tokens ?? Infinity) <= 16);
    assert.equal(world.search.requests.length, 1);
    assert.equal(world.search.requests[0]?.query["format"], "json");
    assert.equal(world.search.requests[0]?.query["q"], "lisa check");
  });

  test("explains a wrong Matrix password and exits 78", async () => {
    const { run } = await checkWorld({}, (world) => world.hs.setPassword(LISA, "a-changed-password"));
    assert.equal(run.code, 78);
    assert.match(failureLine(run, "matrix"), /\[matrix_login_failed\] wrong password for @lisa:localhost .*matrix\.password.*LISA_MATRIX_PASSWORD/);
    assert.deepEqual(okNames(run), ["configuration", "llm", "search", "pandoc", "database"]);
  });

  test("explains an identity mismatch when the server spells the user differently", async () => {
    const { run } = await checkWorld({ config: { matrix: { user_id: "@Lisa:localhost" } } });
    assert.equal(run.code, 78);
    assert.match(failureLine(run, "matrix"), /\[matrix_identity_mismatch\] .*matrix\.user_id @Lisa:localhost \/ the check's device LISATEST_CHECK \(matrix\.device_id LISATEST with _CHECK\)/);
  });

  test("explains a SearXNG 403 as the search.formats setting", async () => {
    const { run } = await checkWorld({}, (world) => world.search.respondWith({ kind: "json_disabled" }));
    assert.equal(run.code, 78);
    assert.match(failureLine(run, "search"), /\[search_json_disabled\] SearXNG refuses JSON .*add `json` to `search\.formats` in its settings\.yml/);
  });

  test("explains an LLM 401 as a rejected API key", async () => {
    const { run } = await checkWorld({ llmScript: () => errorReply(401, {}, "invalid api key") });
    assert.equal(run.code, 78);
    assert.match(failureLine(run, "llm"), /\[llm_unauthorized\] the LLM rejected the API key \(HTTP 401\).*llm\.api_key/);
  });

  test("explains an LLM server that refuses tool definitions", async () => {
    const { run } = await checkWorld({ llmScript: () => errorReply(400, {}, "tools param requires --jinja flag") });
    assert.equal(run.code, 78);
    assert.match(failureLine(run, "llm"), /\[llm_tools_unsupported\] the LLM server rejected tool definitions.*enable tool calling \(e\.g\. llama\.cpp --jinja/);
  });

  test("names the served models when the configured model is missing", async () => {
    const llm = await startScriptedLlm(() => errorReply(404, {}, "The model `test-model` does not exist."), { model: "other-model" });
    try {
      const { run } = await checkWorld({ config: { llm: { base_url: llm.url } } });
      assert.equal(run.code, 78);
      assert.match(failureLine(run, "llm"), /\[llm_model_missing\] model test-model is not served by the LLM; served: other-model/);
    } finally {
      await llm.close();
    }
  });

  test("reports a database directory this user cannot write as a configuration failure", async () => {
    const world = await createWorld({});
    try {
      // Root bypasses directory modes, so as root the child runs as an unprivileged user.
      const asRoot = process.getuid?.() === 0;
      chmodSync(world.dir, 0o755);
      const locked = join(world.dir, "locked");
      mkdirSync(locked);
      chmodSync(locked, 0o555);
      const path = rewriteConfig(world.configPath, "config-locked.toml", { runtime: { database_path: join(locked, "state.sqlite3") } });
      const run = await runLisa(["check", "--config", path], world.env, asRoot ? { uid: 65534, gid: 65534 } : undefined);
      assertNoSecrets(run);
      assert.equal(run.code, 78);
      assert.match(run.stderr, /configuration: FAILED/);
      assert.ok(run.stderr.includes(`runtime.database_path: directory ${locked} is not writable (EACCES)`), run.stderr);
      assert.equal(world.hs.requests().length, 0, "no probe runs after a configuration failure");
    } finally {
      await world.close();
    }
  });
});

describe("lisa check --offline", () => {
  test("validates the configuration without a single network request and exits 0", async () => {
    const tripwire = await startTripwire();
    const hs = await startFakeHomeserver({ profile: "continuwuity" });
    const llm = await startScriptedLlm(() => textReply("OK"));
    const search = await startFakeSearxng();
    try {
      const { path, env } = writeTestConfig({
        matrix: { homeserver_url: tripwire.url }, llm: { base_url: `${tripwire.url}/v1` }, search: { endpoint: `${tripwire.url}/search` },
      });
      const run = await runLisa(["check", "--offline", "--config", path], env);
      assertNoSecrets(run);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, "configuration: ok\n");
      assert.equal(tripwire.connections(), 0);
      // The same configuration pointed at the fakes: their request logs stay empty too.
      const real = writeTestConfig({ matrix: { homeserver_url: hs.url }, llm: { base_url: llm.url }, search: { endpoint: search.endpoint } });
      const second = await runLisa(["check", "--config", real.path, "--offline"], real.env);
      assert.equal(second.code, 0, second.stderr);
      assert.deepEqual([hs.requests().length, llm.requests.length, search.requests.length], [0, 0, 0]);
    } finally {
      await Promise.all([tripwire.close(), hs.close(), llm.close(), search.close()]);
    }
  });

  test("refuses a literal password with exit 78 and never echoes it", async () => {
    const literal = "literal-password-never-printed-5d1e";
    const { path, env } = writeTestConfig();
    const bad = rewriteConfig(path, "config-literal.toml", { matrix: { password: literal } });
    const run = await runLisa(["check", "--offline", "--config", bad], env);
    assertNoSecrets(run);
    assert.equal(run.code, 78);
    assert.match(run.stderr, /configuration: FAILED/);
    assert.match(run.stderr, /matrix\.password: must be an env: reference/);
    assert.ok(!run.stdout.includes(literal) && !run.stderr.includes(literal), "the literal password was echoed");
  });

  test("exits 78 with the variable's name when a secret's environment variable is missing", async () => {
    const { path } = writeTestConfig();
    const run = await runLisa(["check", "--offline", "--config", path], { LISA_LLM_API_KEY: CANARY.llmKey, LISA_SEARCH_API_KEY: CANARY.searchKey });
    assertNoSecrets(run);
    assert.equal(run.code, 78);
    assert.match(run.stderr, /matrix\.password: environment variable LISA_MATRIX_PASSWORD is not set/);
  });
});

describe("lisa command line", () => {
  test("--version prints the package version and exits 0", async () => {
    const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string };
    const run = await runLisa(["--version"]);
    assert.equal(run.code, 0);
    assert.equal(run.stdout, `lisa ${pkg.version}\n`);
  });

  test("--help prints the usage and exits 0", async () => {
    const run = await runLisa(["--help"]);
    assert.equal(run.code, 0);
    assert.match(run.stdout, /^Usage:\n {2}lisa \[run\] --config PATH/);
  });

  test("unknown arguments exit 2 with the usage on stderr", async () => {
    for (const args of [["frobnicate", "--config", "x.toml"], ["check", "--config", "x.toml", "--json"], ["--bogus"], ["check"]]) {
      const run = await runLisa(args);
      assert.equal(run.code, 2, args.join(" "));
      assert.equal(run.stdout, "");
      assert.match(run.stderr, /^lisa: .+\nUsage:\n/);
    }
  });

  test("a missing configuration file exits 78 with the path", async () => {
    const run = await runLisa(["check", "--config", "/nonexistent/lisa.toml"], CANARY_ENV);
    assert.equal(run.code, 78);
    assert.match(run.stderr, /config: cannot read \/nonexistent\/lisa\.toml \(ENOENT\)/);
  });
});

/** Copies a config file with some keys replaced (world-readable, for an unprivileged child). */
function rewriteConfig(path: string, name: string, changes: Record<string, Record<string, unknown>>): string {
  const tables = parseToml(readFileSync(path, "utf8")) as Record<string, Record<string, unknown>>;
  for (const [section, values] of Object.entries(changes)) tables[section] = { ...tables[section], ...values };
  const out = join(dirname(path), name);
  writeFileSync(out, stringify(tables), { mode: 0o644 });
  return out;
}

/** A TCP listener that only counts connections: any request at all is a failure of --offline. */
async function startTripwire(): Promise<{ url: string; connections(): number; close(): Promise<void> }> {
  let count = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    count += 1;
    sockets.add(socket);
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => count,
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
}
