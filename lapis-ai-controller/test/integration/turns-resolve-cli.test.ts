// The CLI `turns resolve` against a real database left by a SIGKILLed serve
// (P-TRN-07, with P-TRN-05/06): exit 2 without the confirmation flag, exit 0
// with it, an audit row, the queue released after restart, no re-send.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { engineServe, readDb, waitTurn } from "../support/engine-serve.ts";
import { tempDir } from "../support/temp.ts";

const PACKAGE = resolve(import.meta.dirname, "../..");

function cli(args: readonly string[], env: Readonly<Record<string, string>>) {
  const r = spawnSync(join(PACKAGE, "node_modules/.bin/node"), [join(PACKAGE, "src/main.ts"), ...args], { env, encoding: "utf8", timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

async function until(fn: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 15_000;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

test("P-TRN-07 turns resolve exits 2 without --confirm-external-stopped and 0 with it; the queue is released, nothing re-sent", async (t) => {
  const dir = tempDir(t, "aic-cli-resolve-");
  const agent = scriptedAgent({ byPrompt: { "CLI-LOST": [{ stall: true }] }, steps: [{ say: "ok" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 1);
  await serve.start();
  let c = await serve.client();
  const threadId = String((await c.createThread({ workspace: "ws-1", provider: "scripted" })).threadId);
  const lost = String((await c.submitTurn(threadId, { text: "CLI-LOST" })).turnId);
  const queued = String((await c.submitTurn(threadId, { text: "CLI-NEXT" })).turnId);
  await until(() => agent.log().some((e) => e.event === "prompt"), "prompt");

  const whileRunning = cli(["turns", "resolve", lost, "--as", "cancelled", "--confirm-external-stopped", ...serve.cliArgs], serve.env);
  assert.notEqual(whileRunning.status, 0);
  assert.match(whileRunning.stderr, /instance_locked/);
  c.close();
  await serve.kill("SIGKILL");

  const refused = cli(["turns", "resolve", lost, "--as", "cancelled", ...serve.cliArgs], serve.env);
  assert.equal(refused.status, 2);
  assert.match(refused.stderr, /confirmation_required/);
  assert.equal(cli(["turns", "resolve", lost, "--as", "maybe", "--confirm-external-stopped", ...serve.cliArgs], serve.env).status, 2);

  const done = cli(["turns", "resolve", lost, "--as", "cancelled", "--confirm-external-stopped", ...serve.cliArgs], serve.env);
  assert.equal(done.status, 0, done.stderr);
  assert.deepEqual(JSON.parse(done.stdout), { turnId: lost, state: "cancelled" });
  assert.equal(readDb(serve.databasePath, "SELECT 1 FROM audit WHERE subject_id = ? AND action = 'turn_resolved'", lost).length, 1);
  assert.equal(cli(["turns", "resolve", lost, "--as", "failed", "--confirm-external-stopped", ...serve.cliArgs], serve.env).status, 2, "a settled turn is not resolvable again");

  await serve.start();
  c = await serve.client();
  await waitTurn(c, queued, ["completed"]);
  assert.equal((await c.call("turns.get", { turnId: lost }) as { state: string }).state, "cancelled");
  assert.equal(agent.log().filter((e) => e.event === "prompt" && String(e.text).includes("CLI-LOST")).length, 1);
  c.close();
});
