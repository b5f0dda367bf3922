// Deno runtime acceptance (issue 16, plan WP5): the INSTALLED snapshot, run
// by Deno through the launcher, serves a full turn through the real
// codex-acp 1.13.1 and the real Codex 0.156.1 (its model is the scripted
// Responses-API stand-in), with an approval and a file effect checked on
// disk; a SIGKILL leaves a lost outcome that restart recovery reports, and
// `turns resolve` through the launcher clears it. codex-acp stays an external
// executable (it is not part of the snapshot): the provider names it by path.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { ControllerClient } from "../../src/client.ts";
import { FAKE_KEY_ENV, writeCodexHome } from "../support/codex-home.ts";
import { readDb, waitTurn } from "../support/engine-serve.ts";
import { homeDir, installCli, launcher, PACKAGE, readiness, seenOutputs, spawnLauncher, writeCodexConfig } from "../support/installed-cli.ts";
import { descendants } from "../support/proc-tree.ts";
import { startScriptedResponsesApi } from "../support/scripted-responses-api.ts";

const TOKEN = "CANARYtok-deno-accept-3a9c5e1b7d2f8064";

type Interaction = { interactionId: string; state: string; optionIds: string[] };

async function pending(c: ControllerClient, turnId: string): Promise<Interaction> {
  const end = Date.now() + 90_000;
  for (;;) {
    const v = (await c.call("turns.get", { turnId })) as { interactions: Interaction[] };
    const open = v.interactions.find((i) => i.state === "pending");
    if (open) return open;
    if (Date.now() > end) throw new Error(`no pending interaction: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("P-OPS-02 installed snapshot under Deno: a real codex-acp turn with approval and file effect, SIGKILL, recovery, turns resolve", { timeout: 600_000 }, async (t) => {
  const model = await startScriptedResponsesApi();
  t.after(() => model.close());
  const root = homeDir(t);
  const codex = writeCodexHome(root, model.baseUrl);
  const home = codex.home;
  writeCodexConfig(home, TOKEN, { ws: codex.workspace }, { turns: { cancelConfirmMs: 20_000, interactionDeadlineMs: 120_000 } });
  const installed = installCli(home);
  assert.equal(installed.code, 0, installed.stderr);
  const agentEnv = { CODEX_HOME: codex.codexHome, [FAKE_KEY_ENV]: "scripted-not-a-secret" };

  let serve = spawnLauncher(t, home, ["serve"], agentEnv, "serve 1");
  let ready = await readiness(serve, 90_000);
  assert.equal(ready.runtime, "deno");
  let c = await ControllerClient.connect({ url: String(ready.url), credential: { type: "token", token: TOKEN } });
  const threadId = String((await c.createThread({ workspace: "ws", provider: "codex" })).threadId);

  // A full turn with an approval; the approved command's file is checked on disk.
  const file = join(codex.workspace, "approved-under-deno.txt");
  model.push({ call: { name: "exec_command", arguments: { cmd: `touch ${file}`, sandbox_permissions: "require_escalated", justification: "acceptance" } } }, { text: ["done"] });
  const turnId = String((await c.submitTurn(threadId, { text: "create the file" })).turnId);
  const ask = await pending(c, turnId);
  assert.equal(existsSync(file), false, "nothing runs before the decision");
  const allow = ask.optionIds.find((id) => /approved$|allow/.test(id)) ?? ask.optionIds[0];
  await c.command("interactions.respond", { turnId, interactionId: ask.interactionId, optionId: allow });
  await waitTurn(c, turnId, ["completed"], 90_000);
  assert.equal(existsSync(file), true, "the approved command wrote the file");

  // The agent's processes (the real codex-acp and Codex, kept for the thread's session) are
  // stopped with SIGSTOP, so the next prompt crosses the persisted dispatch boundary but can
  // never be acknowledged; then the service is SIGKILLed: the outcome is unknown.
  const agents = descendants(serve.child.pid as number);
  assert.ok(agents.length > 0, "the session's agent is still running");
  for (const pid of agents) {
    try {
      process.kill(pid, "SIGSTOP");
    } catch (error) {
      // A short-lived child (the approved command's shell) may exit between listing and signal.
      if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
    }
  }
  t.after(() => {
    for (const pid of agents) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        /* already gone */
      }
    }
  });
  const before = model.requests.length;
  const lost = String((await c.submitTurn(threadId, { text: "never acknowledged" })).turnId);
  await waitTurn(c, lost, ["dispatched"], 60_000);
  await new Promise((r) => setTimeout(r, 1_000));
  assert.equal(((await c.call("turns.get", { turnId: lost })) as { state: string }).state, "dispatched", "no acknowledgement from a stopped agent");
  c.close();
  serve.child.kill("SIGKILL");
  assert.equal(await serve.exited, "SIGKILL");
  for (const pid of agents) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      /* already gone */
    }
  }

  // Restart: recovery reports the lost outcome and fences the workspace; nothing is re-sent.
  serve = spawnLauncher(t, home, ["serve"], agentEnv, "serve 2");
  ready = await readiness(serve, 90_000);
  c = await ControllerClient.connect({ url: String(ready.url), credential: { type: "token", token: TOKEN } });
  const recovered = String(((await c.call("turns.get", { turnId: lost })) as { state: string }).state);
  assert.equal(recovered, "submission_unknown", "the SIGKILL left the outcome unknown");
  c.close();
  serve.child.kill("SIGTERM");
  assert.equal(await serve.exited, 0);

  const resolved = launcher(home, ["turns", "resolve", lost, "--as", "failed", "--confirm-external-stopped"]);
  assert.equal(resolved.code, 0, resolved.stderr);
  assert.deepEqual(JSON.parse(resolved.stdout), { turnId: lost, state: "failed" });
  const db = join(home, ".lapis", "ai-controller", "instances", "default", "controller.sqlite");
  assert.equal(readDb(db, "SELECT 1 FROM audit WHERE subject_id = ? AND action = 'turn_resolved'", lost).length, 1);
  assert.equal(model.requests.length, before, "the lost prompt never reached the model, and nothing re-sent it");
  for (const out of seenOutputs) assert.ok(!out.text.includes(TOKEN), `token in output of ${out.label}`);
});
