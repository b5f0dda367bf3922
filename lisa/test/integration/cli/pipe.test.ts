// Issue 26 point 4: `lisa check` and `lisa status` whose reader goes away
// (`| head -1`, or a pipe closed before the first line) end quietly with the
// command's own exit status: no "write EPIPE", no unhandled 'error' event.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, test } from "node:test";
import { writeTestConfig } from "../../support/config.ts";
import { LISA, REPO, createWorld, type World } from "../../support/lisa-harness.ts";
import { textReply } from "../../support/scripted-llm.ts";

const NODE = join(REPO, "node_modules/.bin/node");
const ENTRY = join(REPO, "src/bin.ts");
const KILL_AFTER_MS = 60_000;

interface Ended {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** stderr as read while it stayed open. */
  readonly stderr: string;
}

/** Runs `lisa ...args` and closes the reading end of stdout (and of stderr, if asked) before the command writes anything. */
function runWithClosedPipes(args: readonly string[], env: Record<string, string>, close: "stdout" | "both"): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [ENTRY, ...args], { cwd: REPO, env: { PATH: process.env["PATH"] ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.destroy();
    if (close === "both") child.stderr.destroy();
    let stderr = "";
    if (close === "stdout") child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const killer = setTimeout(() => child.kill("SIGKILL"), KILL_AFTER_MS);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, stderr });
    });
  });
}

/** The issue's own reproduction: `lisa ... | head -1`, with lisa's exit status from PIPESTATUS. */
function runIntoHead(args: readonly string[], env: Record<string, string>): Promise<{ readonly status: number; readonly first: string; readonly stderr: string }> {
  const quoted = [NODE, ENTRY, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  return new Promise((resolve, reject) => {
    const shell = spawn("bash", ["-c", `${quoted} 2>"$LISA_PIPE_ERR" | head -1; echo "status=\${PIPESTATUS[0]}"; cat "$LISA_PIPE_ERR"`], {
      cwd: REPO, env: { PATH: process.env["PATH"] ?? "", ...env, LISA_PIPE_ERR: join(env["LISA_TEST_DIR"] ?? "/tmp", `pipe-err-${process.pid}-${Date.now()}`) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    shell.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    const killer = setTimeout(() => shell.kill("SIGKILL"), KILL_AFTER_MS);
    shell.on("error", reject);
    shell.on("close", () => {
      clearTimeout(killer);
      const [first = "", statusLine = "", ...rest] = out.split("\n");
      const status = Number(/^status=(\d+)$/.exec(statusLine)?.[1] ?? NaN);
      resolve({ status, first, stderr: rest.join("\n") });
    });
  });
}

function assertQuiet(stderr: string): void {
  assert.doesNotMatch(stderr, /EPIPE|Unhandled 'error' event|at .*output\.ts|Error:/, stderr);
}

async function withWorld(prepare: (world: World) => void, body: (world: World) => Promise<void>): Promise<void> {
  const world = await createWorld({ llmScript: () => textReply("OK") });
  try {
    prepare(world);
    await body(world);
  } finally {
    await world.close();
  }
}

describe("LISA-CLI-01: a closed pipe ends the command quietly with its own exit status", () => {
  test("lisa status (text and --json) exits 1 for a degraded ledger with stdout closed", async () => {
    const { path, env } = writeTestConfig();
    for (const json of [[], ["--json"]]) {
      const ended = await runWithClosedPipes(["status", ...json, "--config", path], env, "stdout");
      assert.deepEqual([ended.code, ended.signal], [1, null], ended.stderr);
      assert.equal(ended.stderr, "");
    }
    const both = await runWithClosedPipes(["status", "--config", path], env, "both");
    assert.deepEqual([both.code, both.signal], [1, null]);
  });

  test("lisa status | head -1 prints the first line and keeps status 1", async () => {
    const { path, env, dir } = writeTestConfig();
    const run = await runIntoHead(["status", "--config", path], { ...env, LISA_TEST_DIR: dir });
    assert.match(run.first, /^health: degraded/);
    assert.equal(run.status, 1);
    assertQuiet(run.stderr);
  });

  test("lisa check exits 0 with stdout closed when every service is healthy", async () => {
    await withWorld(() => undefined, async (world) => {
      const ended = await runWithClosedPipes(["check", "--config", world.configPath], world.env, "stdout");
      assert.deepEqual([ended.code, ended.signal], [0, null], ended.stderr);
      assert.equal(ended.stderr, "");
    });
  });

  test("lisa check exits 78 with stdout and stderr closed when a probe fails", async () => {
    await withWorld((world) => world.hs.setPassword(LISA, "a-changed-password"), async (world) => {
      const ended = await runWithClosedPipes(["check", "--config", world.configPath], world.env, "both");
      assert.deepEqual([ended.code, ended.signal], [78, null]);
    });
  });

  test("lisa check | head -1 prints the configuration line and keeps its status", async () => {
    await withWorld((world) => world.hs.setPassword(LISA, "a-changed-password"), async (world) => {
      const run = await runIntoHead(["check", "--config", world.configPath], { ...world.env, LISA_TEST_DIR: world.dir });
      assert.equal(run.first, "configuration: ok");
      assert.equal(run.status, 78);
      assert.match(run.stderr, /^matrix: FAILED \[matrix_login_failed\]/m, "stderr, not piped, still has the failure");
      assertQuiet(run.stderr);
    });
  });
});
