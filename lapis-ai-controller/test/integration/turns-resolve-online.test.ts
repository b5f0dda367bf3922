// The CLI `turns resolve` against a RUNNING serve (P-TRN-07, with P-TRN-05):
// the instance lock is held, so the CLI reaches the service over the protocol
// (listen address and env: owner token from the same config) and calls
// turns.resolve. Exit 2 without the confirmation flag or for an unknown turn,
// exit 0 with it, exit 1 when the service cannot be reached; an audit row, the fenced queue released, nothing re-sent,
// and the token never in argv or output.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { test } from "node:test";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { ENGINE_TOKENS, engineServe, readDb, waitTurn } from "../support/engine-serve.ts";
import { tempDir } from "../support/temp.ts";
import { runCli } from "../support/processes.ts";
import { waitFor } from "../support/engine-fixture.ts";

/** A loopback port that was free a moment ago (the CLI needs a fixed listen port in the config). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

test("P-TRN-07 P-TRN-05 turns resolve against a running service: exit 2 without --confirm-external-stopped, exit 0 with it, audited, the queue released", async (t) => {
  const dir = tempDir(t, "aic-cli-online-");
  const agent = scriptedAgent({ byPrompt: { "ONLINE-LOST": [{ stall: true }] }, steps: [{ say: "ok" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 1);
  const configPath = join(dir, "config.json");
  const config = JSON.parse(readFileSync(configPath, "utf8")) as { listen: { host: string; port: number } };
  config.listen.port = await freePort();
  writeFileSync(configPath, JSON.stringify(config), { mode: 0o600 });

  await serve.start();
  let c = await serve.client();
  const threadId = String((await c.createThread({ workspace: "ws-1", provider: "scripted" })).threadId);
  const lost = String((await c.submitTurn(threadId, { text: "ONLINE-LOST" })).turnId);
  await waitFor(() => agent.log().some((e) => e.event === "prompt"), "prompt", 15_000);
  c.close();
  await serve.kill("SIGKILL");
  await serve.start();
  c = await serve.client();
  await c.attach(threadId);
  assert.equal((await c.call("turns.get", { turnId: lost }) as { state: string }).state, "submission_unknown");
  const next = String((await c.submitTurn(threadId, { text: "ONLINE-NEXT" })).turnId);
  await new Promise((r) => setTimeout(r, 500));
  assert.equal((await c.call("turns.get", { turnId: next }) as { state: string }).state, "queued", "the workspace is fenced");

  const refused = await runCli(t, "node", ["turns", "resolve", lost, "--as", "cancelled", ...serve.cliArgs], serve.env);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /confirmation_required/);
  const unknown = await runCli(t, "node", ["turns", "resolve", "turn-does-not-exist", "--as", "cancelled", "--confirm-external-stopped", ...serve.cliArgs], serve.env);
  assert.equal(unknown.code, 2, unknown.stderr);
  assert.match(unknown.stderr, /not_found/);
  assert.equal((await c.call("turns.get", { turnId: lost }) as { state: string }).state, "submission_unknown", "refusals change nothing");

  const args = ["turns", "resolve", lost, "--as", "cancelled", "--confirm-external-stopped", ...serve.cliArgs];
  const done = await runCli(t, "node", args, serve.env);
  assert.equal(done.code, 0, done.stderr);
  assert.deepEqual(JSON.parse(done.stdout), { turnId: lost, state: "cancelled" });
  for (const tk of ENGINE_TOKENS) {
    assert.ok(!args.join(" ").includes(tk.value) && !done.stdout.includes(tk.value) && !done.stderr.includes(tk.value), "no token bytes in argv or output");
  }
  await waitTurn(c, next, ["completed"]);
  assert.equal((await c.call("turns.get", { turnId: lost }) as { state: string }).state, "cancelled");
  const audit = readDb<{ action: string; details: string }>(serve.databasePath, "SELECT action, details FROM audit WHERE subject_id = ?", lost);
  assert.equal(audit.length, 1);
  assert.equal(audit[0]?.action, "turn_resolved");
  assert.match(String(audit[0]?.details), /"confirmExternalStopped":true/);

  const again = await runCli(t, "node", ["turns", "resolve", lost, "--as", "failed", "--confirm-external-stopped", ...serve.cliArgs], serve.env);
  assert.equal(again.code, 2, "a settled turn is not resolvable again");
  assert.match(again.stderr, /turn_not_resolvable/);
  assert.equal(agent.log().filter((e) => e.event === "prompt" && String(e.text).includes("ONLINE-LOST")).length, 1, "never re-sent");

  // The lock is held but nothing answers at the configured address: a failure (exit 1), not a request error.
  config.listen.port = await freePort();
  writeFileSync(configPath, JSON.stringify(config), { mode: 0o600 });
  const unreachable = await runCli(t, "node", ["turns", "resolve", next, "--as", "failed", "--confirm-external-stopped", ...serve.cliArgs], serve.env);
  assert.equal(unreachable.code, 1, unreachable.stderr);
  assert.match(unreachable.stderr, /service_unavailable/);
  c.close();
});
