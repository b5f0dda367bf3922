// The CLI `turns resolve` against a real database left by a SIGKILLed serve
// (P-TRN-07, with P-TRN-05/06): exit 2 without the confirmation flag, exit 0
// with it, an audit row, the queue released after restart, no re-send.
import assert from "node:assert/strict";
import { test } from "node:test";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { engineServe, readDb, waitTurn } from "../support/engine-serve.ts";
import { tempDir } from "../support/temp.ts";
import { runCli } from "../support/processes.ts";
import { waitFor } from "../support/engine-fixture.ts";

test("P-TRN-07 turns resolve exits 2 without --confirm-external-stopped and 0 with it; the queue is released, nothing re-sent", async (t) => {
  const dir = tempDir(t, "aic-cli-resolve-");
  const agent = scriptedAgent({ byPrompt: { "CLI-LOST": [{ stall: true }] }, steps: [{ say: "ok" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 1);
  await serve.start();
  let c = await serve.client();
  const threadId = String((await c.createThread({ workspace: "ws-1", provider: "scripted" })).threadId);
  const lost = String((await c.submitTurn(threadId, { text: "CLI-LOST" })).turnId);
  const queued = String((await c.submitTurn(threadId, { text: "CLI-NEXT" })).turnId);
  await waitFor(() => agent.log().some((e) => e.event === "prompt"), "prompt", 15_000);

  const whileRunning = await runCli(t, "node", ["turns", "resolve", lost, "--as", "cancelled", "--confirm-external-stopped", ...serve.cliArgs], serve.env);
  assert.notEqual(whileRunning.code, 0);
  assert.match(whileRunning.stderr, /instance_locked/);
  c.close();
  await serve.kill("SIGKILL");

  const refused = await runCli(t, "node", ["turns", "resolve", lost, "--as", "cancelled", ...serve.cliArgs], serve.env);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /confirmation_required/);
  assert.equal((await runCli(t, "node", ["turns", "resolve", lost, "--as", "maybe", "--confirm-external-stopped", ...serve.cliArgs], serve.env)).code, 2);

  const done = await runCli(t, "node", ["turns", "resolve", lost, "--as", "cancelled", "--confirm-external-stopped", ...serve.cliArgs], serve.env);
  assert.equal(done.code, 0, done.stderr);
  assert.deepEqual(JSON.parse(done.stdout), { turnId: lost, state: "cancelled" });
  assert.equal(readDb(serve.databasePath, "SELECT 1 FROM audit WHERE subject_id = ? AND action = 'turn_resolved'", lost).length, 1);
  assert.equal((await runCli(t, "node", ["turns", "resolve", lost, "--as", "failed", "--confirm-external-stopped", ...serve.cliArgs], serve.env)).code, 2, "a settled turn is not resolvable again");

  await serve.start();
  c = await serve.client();
  await waitTurn(c, queued, ["completed"]);
  assert.equal((await c.call("turns.get", { turnId: lost }) as { state: string }).state, "cancelled");
  assert.equal(agent.log().filter((e) => e.event === "prompt" && String(e.text).includes("CLI-LOST")).length, 1);
  c.close();
});
