// Real-agent lane, VCS identity: a provider's `vcsIdentity` reaches the real
// Codex only through the agent's environment (GIT_AUTHOR_* / GIT_COMMITTER_*),
// so a `git commit` run by an approved command carries it; never argv, never
// the user's repository config. Changing it replaces the native session, and
// the transcript says so with a `context_reset`. Both executors: the native
// app-server and codex-acp, each through serve and the SDK.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import type { ControllerClient } from "../../src/client.ts";
import { sessionBindingKey } from "../../src/execution/acp-executor.ts";
import { startAgentServe, type AgentServe } from "../support/agent-serve.ts";
import { FAKE_KEY_ENV } from "../support/codex-home.ts";
import { escalated, nativeFixture, prepared } from "../support/codex-native-fixture.ts";
import { readDb, waitTurn } from "../support/engine-serve.ts";
import { processesWithEnv, procText } from "../support/proc-tree.ts";

const ANN = { name: "Ann Example", email: "ann@example.org" };
const BOB = { name: "Bob Other", email: "bob@example.net" };

type Interaction = { interactionId: string; state: string; optionIds: string[] };

/** Answers the turn's next approval with the first offered id that `allow` matches. */
async function approveNext(c: ControllerClient, turnId: string, allow: RegExp): Promise<void> {
  const end = Date.now() + 60_000;
  for (;;) {
    const v = (await c.call("turns.get", { turnId })) as { interactions: Interaction[] };
    const open = v.interactions.find((i) => i.state === "pending");
    if (open) {
      const optionId = open.optionIds.find((id) => allow.test(id));
      assert.ok(optionId, `an allow option among ${open.optionIds.join(",")}`);
      await c.command("interactions.respond", { turnId, interactionId: open.interactionId, optionId });
      return;
    }
    if (Date.now() > end) throw new Error("no pending interaction");
    await new Promise((r) => setTimeout(r, 50));
  }
}

function git(cwd: string, ...args: string[]): string {
  const r = spawnSync("git", args, { cwd, encoding: "utf8", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: cwd, GIT_CONFIG_NOSYSTEM: "1" } });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

/** The workspace as a fresh repository with no identity of its own. */
function initRepo(ws: string): void {
  git(ws, "init", "-q", "-b", "main");
}

/** One turn whose approved command commits a new file; returns the turn id. */
async function commitTurn(serve: AgentServe, c: ControllerClient, threadId: string, file: string, allow: RegExp): Promise<string> {
  const ws = serve.home.workspace;
  serve.model.push(escalated(`cd ${ws} && echo ${file} > ${file} && git add ${file} && git commit -q -m "add ${file}"`), { text: ["committed"] });
  const turnId = String((await c.submitTurn(threadId, { text: `commit ${file}` })).turnId);
  await approveNext(c, turnId, allow);
  await waitTurn(c, turnId, ["completed"], 90_000);
  return turnId;
}

function head(ws: string): string {
  return git(ws, "log", "-1", "--format=%an|%ae|%cn|%ce|%s");
}

function nativeSession(serve: AgentServe, threadId: string): string {
  const rows = readDb<{ native_session_id: string }>(serve.databasePath, "SELECT native_session_id FROM provider_sessions WHERE thread_id = ?", threadId);
  assert.equal(rows.length, 1);
  return rows[0]?.native_session_id ?? "";
}

function resets(serve: AgentServe, turnId: string): unknown[] {
  return readDb<{ metadata: string; payload: string | null }>(serve.databasePath, "SELECT metadata, payload FROM journal WHERE turn_id = ? AND kind = 'context_reset'", turnId)
    .map((r) => ({ ...(JSON.parse(r.metadata) as Record<string, unknown>), ...(r.payload === null ? {} : (JSON.parse(r.payload) as Record<string, unknown>)) }));
}

function setIdentity(serve: AgentServe, identity: { name: string; email: string }): void {
  const config = JSON.parse(readFileSync(serve.configPath, "utf8")) as { providers: Record<string, Record<string, unknown>> };
  const codex = config.providers.codex;
  assert.ok(codex);
  codex.vcsIdentity = identity;
  writeFileSync(serve.configPath, JSON.stringify(config), { mode: 0o600 });
}

function hasIdentity(environ: string, id: { name: string; email: string }): boolean {
  const vars = environ.split("\0");
  return ["AUTHOR", "COMMITTER"].every((who) => vars.includes(`GIT_${who}_NAME=${id.name}`) && vars.includes(`GIT_${who}_EMAIL=${id.email}`));
}

/** The identity is in the agent's environment only: no argv of any agent process, no repository config. */
function assertOnlyInEnv(serve: AgentServe, identity: { name: string; email: string }): void {
  const agents = processesWithEnv(`CODEX_HOME=${serve.home.codexHome}`);
  assert.ok(agents.length >= 1, "the agent runs");
  assert.ok(agents.some((pid) => hasIdentity(procText(pid, "environ"), identity)));
  for (const pid of agents) assert.equal(procText(pid, "cmdline").includes(identity.email), false, "never in argv");
  assert.equal(readFileSync(join(serve.home.workspace, ".git", "config"), "utf8").includes(identity.email), false, "never in the repository config");
}

async function identityScenario(serve: AgentServe, allow: RegExp): Promise<void> {
  initRepo(serve.home.workspace);
  let c = await serve.client();
  const threadId = String((await c.createThread({ workspace: "ws", provider: "codex" })).threadId);
  const first = await commitTurn(serve, c, threadId, "one.txt", allow);
  assert.equal(head(serve.home.workspace), `${ANN.name}|${ANN.email}|${ANN.name}|${ANN.email}|add one.txt`);
  assertOnlyInEnv(serve, ANN);
  assert.deepEqual(resets(serve, first), []);
  const before = nativeSession(serve, threadId);

  // Another identity: serve restarts on the changed config; the stored session is not reopened.
  c.close();
  setIdentity(serve, BOB);
  await serve.restart();
  c = await serve.client();
  await c.attach(threadId);
  const second = await commitTurn(serve, c, threadId, "two.txt", allow);
  assert.equal(head(serve.home.workspace), `${BOB.name}|${BOB.email}|${BOB.name}|${BOB.email}|add two.txt`);
  assertOnlyInEnv(serve, BOB);
  assert.deepEqual(resets(serve, second).map((r) => (r as { reason?: unknown }).reason), ["session_binding_changed"]);
  assert.notEqual(nativeSession(serve, threadId), before, "a new native session");

  // The same identity after another restart: the session is reopened, no reset.
  c.close();
  await serve.restart();
  c = await serve.client();
  await c.attach(threadId);
  const third = await commitTurn(serve, c, threadId, "three.txt", allow);
  assert.equal(head(serve.home.workspace), `${BOB.name}|${BOB.email}|${BOB.name}|${BOB.email}|add three.txt`);
  assert.deepEqual(resets(serve, third), []);
  assert.equal(git(serve.home.workspace, "rev-list", "--count", "HEAD"), "3");
}

test("P-PRV-05 native Codex: an approved git commit carries the provider's vcsIdentity; a changed identity replaces the thread with a context_reset", { timeout: 300_000 }, async (t) => {
  const providers = { codex: { kind: "codex-app-server", vcsIdentity: ANN, envAllowlist: ["CODEX_HOME", FAKE_KEY_ENV], setupTimeoutMs: 60_000, killGraceMs: 3_000 } };
  const serve = await startAgentServe(t, [], { providers, limits: { turns: { interactionDeadlineMs: 120_000 } } });
  await identityScenario(serve, /^accept$/);
});

test("P-PRV-05 codex-acp: an approved git commit carries the provider's vcsIdentity; a changed identity replaces the session with a context_reset", { timeout: 300_000 }, async (t) => {
  const providers = { codex: { agent: "codex", mode: "read-only", vcsIdentity: ANN, envAllowlist: ["CODEX_HOME", FAKE_KEY_ENV], setupTimeoutMs: 60_000, killGraceMs: 3_000 } };
  const serve = await startAgentServe(t, [], { providers, limits: { turns: { interactionDeadlineMs: 120_000 } } });
  await identityScenario(serve, /^approved$|allow/);
});

test("P-PRV-05 native executor: a live session with another identity is replaced, never continued, and the stored thread is not reopened", { timeout: 120_000 }, async (t) => {
  const f = await nativeFixture(t);
  const ex = f.executor();
  const ann = f.setup({ vcsIdentity: ANN });
  const s1 = await prepared(ex, ann);
  const again = await ex.prepare(f.setup({ vcsIdentity: { ...ANN }, resume: { nativeSessionId: s1.nativeSessionId, bindingKey: sessionBindingKey(ann) } }));
  assert.ok(again.ok && again.continuity.kind === "continued" && again.session === s1, "the same identity keeps the live thread");
  assert.equal(ex.spawnCount, 1);
  const bob = f.setup({ vcsIdentity: BOB, resume: { nativeSessionId: s1.nativeSessionId, bindingKey: sessionBindingKey(ann) } });
  assert.notEqual(sessionBindingKey(bob), sessionBindingKey(ann), "the identity is part of the binding key");
  const s2 = await prepared(ex, bob);
  assert.equal(ex.spawnCount, 2, "a new app-server process");
  assert.deepEqual(s2.continuity, { kind: "reset", reason: "session_binding_changed" });
  assert.notEqual(s2.nativeSessionId, s1.nativeSessionId);
  const agents = processesWithEnv(`CODEX_HOME=${f.home.codexHome}`);
  assert.ok(agents.length >= 1 && agents.every((pid) => hasIdentity(procText(pid, "environ"), BOB)), "only the new identity's process is left");
});
