// The operator's lifecycle commands: `usage` prints the reported token totals
// per application (read-only, beside a running service), and `threads delete`
// erases any application's thread through the running service (owner token
// from the config) or, with the service stopped, in its database; the audit
// names owner/owner; token bytes never reach argv or output.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { test } from "node:test";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { ENGINE_TOKENS, engineServe, readDb, waitTurn } from "../support/engine-serve.ts";
import { runCli } from "../support/processes.ts";
import { tempDir } from "../support/temp.ts";

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

const OWNER = { envName: "AIC_E_OWNER", value: "CANARYtok-owner-6a2d9f1e0c4b8753" };

test("P-LIF-13 P-LIF-03 CLI usage per application and threads delete (the operator erases any application's thread), online (running service) and offline (stopped)", { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t, "aic-cli-threads-");
  const agent = scriptedAgent({ steps: [{ say: "done" }], usage: { inputTokens: 400, cachedReadTokens: 100, outputTokens: 30, thoughtTokens: 3, totalTokens: 530 } }, "scripted", dir);
  const tokens = [
    ...ENGINE_TOKENS.map((tk) => ({ id: tk.id, token: `env:${tk.envName}`, principal: tk.principal, application: tk.application })),
    { id: "owner", token: `env:${OWNER.envName}`, principal: "owner", application: "owner" },
  ];
  const serve = engineServe(t, dir, [agent.provider], 1, {}, "node", { tokens });
  (serve.env as Record<string, string>)[OWNER.envName] = OWNER.value;
  const configPath = join(dir, "config.json");
  const config = JSON.parse(readFileSync(configPath, "utf8")) as { listen: { port: number } };
  config.listen.port = await freePort();
  writeFileSync(configPath, JSON.stringify(config), { mode: 0o600 });
  await serve.start();
  const alice = await serve.client("alice");
  const carol = await serve.client("carol");
  t.after(() => { alice.close(); carol.close(); });
  const threadA = String((await alice.createThread({ workspace: "ws-1", provider: "scripted" })).threadId);
  await waitTurn(alice, String((await alice.submitTurn(threadA, { text: "one" })).turnId), ["completed"]);
  await waitTurn(alice, String((await alice.submitTurn(threadA, { text: "two" })).turnId), ["completed"]);
  const threadC = String((await carol.createThread({ workspace: "ws-1", provider: "scripted" })).threadId);
  await waitTurn(carol, String((await carol.submitTurn(threadC, { text: "three" })).turnId), ["completed"]);
  const env = serve.env as Record<string, string>;

  const usage = await runCli(t, "node", ["usage", "--json", ...serve.cliArgs], env);
  assert.equal(usage.code, 0, usage.stderr);
  const per = (JSON.parse(usage.stdout) as { applications: { application: string; totals: Record<string, number> }[] }).applications;
  assert.deepEqual(per.map((a) => [a.application, a.totals.totalTokens, a.totals.reportedTurns]), [["journal", 530, 1], ["notes", 1060, 2]]);
  const text = await runCli(t, "node", ["usage", ...serve.cliArgs], env);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^notes {2}1,060 tokens {2}\(1,000 in, 200 cached; 60 out, 6 reasoning\) {2}over 2 reported turns$/m);
  assert.equal((await runCli(t, "node", ["usage", "--since", "soon", ...serve.cliArgs], env)).code, 2);

  const online = await runCli(t, "node", ["threads", "delete", threadA, ...serve.cliArgs], env);
  assert.equal(online.code, 0, online.stderr);
  const receipt = JSON.parse(online.stdout) as Record<string, unknown>;
  assert.equal(receipt.threadId, threadA);
  assert.equal(receipt.deleted, true);
  await assert.rejects(alice.call("threads.snapshot", { threadId: threadA }), (e: { code?: string }) => e.code === "not_found");
  for (const out of [online.stdout, online.stderr]) assert.ok(!out.includes(OWNER.value), "no token bytes in output");

  await serve.kill("SIGTERM");
  const offline = await runCli(t, "node", ["threads", "delete", threadC, ...serve.cliArgs], env);
  assert.equal(offline.code, 0, offline.stderr);
  assert.equal((JSON.parse(offline.stdout) as { agentFiles: string }).agentFiles, "unsupported", "a configured ACP command's files are not the controller's to erase");
  const again = await runCli(t, "node", ["threads", "delete", threadC, ...serve.cliArgs], env);
  assert.equal(again.code, 2);
  assert.match(again.stderr, /not_found/);
  assert.equal((await runCli(t, "node", ["threads", "delete", ...serve.cliArgs], env)).code, 2, "a thread id is required");
  const audit = readDb<{ actor: string; subject_id: string }>(serve.databasePath, "SELECT actor, subject_id FROM audit WHERE action = 'thread_deleted' ORDER BY audit_id");
  assert.deepEqual(audit.map((r) => [r.actor, r.subject_id]), [["owner/owner", threadA], ["owner/owner", threadC]]);
  assert.deepEqual(readDb(serve.databasePath, "SELECT thread_id FROM threads"), []);
});
