// Operator paths through the INSTALLED CLI under Deno (issue 25 point 9):
// D5 `deno task install:cli` leaves no staging folder in $TMPDIR; D1/D6 a
// config that `serve` refuses is refused by `doctor` and `status` too, each
// naming the key path and never the value (status, which needs no token,
// checks references without resolving them); D2/D3 on a running service the
// operator resolves an application principal's lost turn from a shell that
// holds only HOME and PATH (only the owner token's env: reference resolves,
// from token.env), audited as the owner, and the fenced queue moves on.
// The agent is the scripted ACP stand-in, launched by the installed serve.
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { test } from "node:test";
import { ControllerClient } from "../../src/client.ts";
import { waitFor } from "../support/engine-fixture.ts";
import { readDb, waitTurn } from "../support/engine-serve.ts";
import { homeDir, installCli, launcher, PINNED_NODE, readiness, seenOutputs, spawnLauncher } from "../support/installed-cli.ts";
import { SCRIPTED_AGENT, scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { tempDir } from "../support/temp.ts";

const OWNER = "CANARYtok-ops-owner-8c2e4a6f1b3d5079";
const APP = "CANARYtok-ops-app-1f9d7b5c3e2a4068";
const APP_ENV = "AIC_OPS_APP_TOKEN";
const VALUE_CANARY = "CANARYval-ops-2d4f6a8c0e1b3957";

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/**
 * Configs serve refuses, with the key path each must name; values carry a canary that must never be printed.
 * `resolution`: only resolving the reference fails, which status (it needs no token) does not do.
 */
const BAD_CONFIGS: readonly { readonly where: string; readonly config: Record<string, unknown>; readonly resolution?: true }[] = [
  { where: "config.surpriseKey", config: { version: 1, surpriseKey: VALUE_CANARY } },
  { where: "config.tokens[0].surprise", config: { version: 1, tokens: [{ id: "owner", token: "env:LAPIS_AI_CONTROLLER_TOKEN", surprise: VALUE_CANARY }] } },
  { where: "config.tokens[0].token", config: { version: 1, tokens: [{ id: "owner", token: `${VALUE_CANARY}-literal-token` }] } },
  { where: "config.tokens[0].token", config: { version: 1, tokens: [{ id: "owner", token: "env:AIC_OPS_NOT_SET_ANYWHERE" }] }, resolution: true },
  { where: "config.providers.codex.surprise", config: { version: 1, providers: { codex: { command: ["/bin/true"], surprise: VALUE_CANARY } } } },
  { where: "config.limits.surprise", config: { version: 1, limits: { surprise: { x: VALUE_CANARY } } } },
  { where: "config.limits.volatile.surprise", config: { version: 1, limits: { volatile: { surprise: 1 } } } },
  { where: "config.listen.allowedOrigins", config: { version: 1, listen: { port: 0, allowedOrigins: [VALUE_CANARY] } } },
];

test("AIC-OPER-01/02/03/05/06 operator paths through the installed CLI: install cleans up, one config check names the key, the owner resolves any principal's lost turn", { timeout: 600_000 }, async (t) => {
  const home = homeDir(t);
  const tmp = tempDir(t, "aic-ops-tmpdir-");
  const root = tempDir(t, "aic-ops-");
  const workspace = join(root, "ws");
  const agent = scriptedAgent({ byPrompt: { "OPS-LOST": [{ stall: true }] }, steps: [{ say: "ok" }] }, "scripted", root);
  const port = await freePort();
  const configDir = join(home, ".config", "lapis-ai-controller");
  // The owner's token sits in token.env (as install writes it); the application's only in serve's environment.
  mkdirSync(configDir, { recursive: true });
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(configDir, "token.env"), `LAPIS_AI_CONTROLLER_TOKEN=${OWNER}\n`, { mode: 0o600 });
  const installed = installCli(home, [], { TMPDIR: tmp });
  assert.equal(installed.code, 0, installed.stderr);
  writeFileSync(join(configDir, "config.json"), JSON.stringify({
    version: 1,
    tokens: [{ id: "owner", token: "env:LAPIS_AI_CONTROLLER_TOKEN" }, { id: "app", token: `env:${APP_ENV}`, principal: "alice", application: "notes" }],
    listen: { host: "127.0.0.1", port },
    workspaces: { ws: workspace },
    providers: { scripted: { command: [PINNED_NODE, SCRIPTED_AGENT, agent.scriptPath, agent.logPath], setupTimeoutMs: 30_000, killGraceMs: 2_000 } },
  }), { mode: 0o600 });

  await t.test("AIC-OPER-05 install:cli removes its $TMPDIR/aic-stage-* staging folder", () => {
    assert.deepEqual(readdirSync(tmp).filter((name) => name.startsWith("aic-stage-")), []);
  });

  await t.test("AIC-OPER-01 AIC-OPER-06 P-STO-03 serve, doctor and status refuse the same configs (status resolves no reference), naming the key path, never the value", () => {
    BAD_CONFIGS.forEach(({ where, config, resolution }, i) => {
      const path = join(root, `bad-${i}.json`);
      writeFileSync(path, JSON.stringify(config), { mode: 0o600 });
      const line = `config_invalid at ${where}`;
      const serve = launcher(home, ["serve", "--config", path]);
      assert.equal(serve.code, 2, `serve ${where}: ${serve.stderr}`);
      assert.ok(serve.stderr.includes(`lapis-ai-controller: error: ${line}\n`), `serve names ${where}: ${serve.stderr}`);
      const status = launcher(home, ["status", "--json", "--config", path]);
      assert.equal(status.code, resolution ? 0 : 2, `status ${where}`);
      if (!resolution) assert.ok(status.stderr.includes(line), `status names ${where}: ${status.stderr}`);
      const doctor = launcher(home, ["doctor", "--config", path]);
      assert.equal(doctor.code, 1, `doctor ${where}`);
      assert.ok(doctor.stdout.includes(`FAIL config: ${line}\n`), `doctor names ${where}: ${doctor.stdout}`);
      for (const r of [serve, status, doctor]) assert.ok(!(r.stdout + r.stderr).includes(VALUE_CANARY), `no value printed for ${where}`);
    });
  });

  await t.test("AIC-OPER-02 AIC-OPER-03 P-TRN-05 P-TRN-07 online turns resolve of an application's lost turn from a shell with only HOME and PATH", async () => {
    const serveEnv = { [APP_ENV]: APP };
    let serve = spawnLauncher(t, home, ["serve"], serveEnv, "serve 1");
    let ready = await readiness(serve, 90_000);
    let app = await ControllerClient.connect({ url: String(ready.url), credential: { type: "token", token: APP }, maxReconnectAttempts: 0 });
    const threadId = String((await app.createThread({ workspace: "ws", provider: "scripted" })).threadId);
    const lost = String((await app.submitTurn(threadId, { text: "OPS-LOST" })).turnId);
    await waitFor(() => agent.log().some((e) => e.event === "prompt"), "the lost prompt reached the agent", 30_000);
    app.close();
    serve.child.kill("SIGKILL");
    assert.equal(await serve.exited, "SIGKILL");

    serve = spawnLauncher(t, home, ["serve"], serveEnv, "serve 2");
    ready = await readiness(serve, 90_000);
    app = await ControllerClient.connect({ url: String(ready.url), credential: { type: "token", token: APP }, maxReconnectAttempts: 0 });
    await app.attach(threadId);
    assert.equal(((await app.call("turns.get", { turnId: lost })) as { state: string }).state, "submission_unknown");
    const next = String((await app.submitTurn(threadId, { text: "OPS-NEXT" })).turnId);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(((await app.call("turns.get", { turnId: next })) as { state: string }).state, "queued", "the workspace is fenced");

    // The shell: HOME and PATH only. The application token's reference does not resolve here; the owner's does (token.env).
    const doctor = launcher(home, ["doctor"]);
    assert.equal(doctor.code, 1, "doctor says what serve would say in this shell");
    assert.ok(doctor.stdout.includes("FAIL config: config_invalid at config.tokens[1].token\n"), doctor.stdout);
    const resolved = launcher(home, ["turns", "resolve", lost, "--as", "failed", "--confirm-external-stopped"]);
    assert.equal(resolved.code, 0, resolved.stderr);
    assert.deepEqual(JSON.parse(resolved.stdout), { turnId: lost, state: "failed" });
    await waitTurn(app, next, ["completed"], 60_000);
    assert.equal(((await app.call("turns.get", { turnId: lost })) as { state: string; errorCode?: string }).state, "failed");
    const db = join(home, ".lapis", "ai-controller", "instances", "default", "controller.sqlite");
    const audit = readDb<{ actor: string; details: string }>(db, "SELECT actor, details FROM audit WHERE subject_id = ? AND action = 'turn_resolved'", lost);
    assert.equal(audit.length, 1);
    assert.equal(audit[0]?.actor, "owner/owner", "resolved under owner authority, audited as the owner");
    assert.equal(agent.log().filter((e) => e.event === "prompt" && String(e.text).includes("OPS-LOST")).length, 1, "never re-sent");

    // With the application's environment too, every doctor check holds (the build verified file by file) and status agrees.
    const healthy = launcher(home, ["doctor"], serveEnv);
    assert.equal(healthy.code, 0, healthy.stdout);
    assert.match(healthy.stdout, /^ok {3}runtime: deno \S+ \(needs >= 2\.9\.5\)$/m);
    assert.match(healthy.stdout, /^ok {3}build: release [0-9a-f]{64} verified \(\d+ entries\)$/m);
    assert.equal(launcher(home, ["status", "--json"], serveEnv).code, 0);
    assert.equal(launcher(home, ["status", "--json"]).code, 0, "status needs no token, so it resolves no reference");
    app.close();
    serve.child.kill("SIGTERM");
    assert.equal(await serve.exited, 0);
  });

  for (const out of seenOutputs) {
    assert.ok(!out.text.includes(OWNER) && !out.text.includes(APP), `token in output of ${out.label}`);
  }
});
