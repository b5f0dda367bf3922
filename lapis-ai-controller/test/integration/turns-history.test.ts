// History controls against `serve` with a scripted ACP agent (an agent that
// advertises session/resume): a cut opens a new session seeded from the
// journal, never a resume of the stored one; the refusals of fork and
// rollback while work runs; a pending seed whose payloads a restart took
// (metadata-only) fails the next turn before anything reaches the agent.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ControllerClient } from "../../src/client.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { engineServe, waitTurn } from "../support/engine-serve.ts";
import { tempDir } from "../support/temp.ts";

async function turn(c: ControllerClient, threadId: string, text: string): Promise<string> {
  const turnId = String((await c.submitTurn(threadId, { text })).turnId);
  await waitTurn(c, turnId, ["completed"], 20_000);
  return turnId;
}

async function code(p: Promise<unknown>): Promise<string> {
  try { await p; } catch (e) { return String((e as { code?: unknown }).code); }
  return "resolved";
}

test("history controls on a scripted ACP agent", async (t) => {
  const dir = tempDir(t, "aic-history-");
  const agent = scriptedAgent({
    resume: true, loadSession: true,
    byPrompt: { STALL: [{ stall: true }], ONE: [{ say: "reply-one-RA" }], TWO: [{ say: "reply-two-RB" }] },
    steps: [{ say: "ok" }],
  }, "resumer", dir);
  const serve = engineServe(t, dir, [agent.provider], 1);
  await serve.start();
  let c = await serve.client();
  const prompts = () => agent.log().filter((e) => e.event === "prompt");
  const source = String((await c.createThread({ workspace: "ws-1", provider: "resumer" })).threadId);
  const t1 = await turn(c, source, "ONE first prompt PA");
  await turn(c, source, "TWO second prompt PB");

  await t.test("P-HIS-03 a fork's first turn opens a new session (no resume of the stored one) seeded with the kept turns", async () => {
    const sessionsBefore = agent.log().filter((e) => e.event === "session_new").length;
    const { threadId: fork } = await c.threads.fork({ threadId: source, afterTurnId: t1 });
    await turn(c, fork, "fork prompt PF");
    assert.equal(agent.log().filter((e) => e.event === "session_new").length, sessionsBefore + 1, "one new session");
    assert.equal(agent.log().some((e) => e.event === "session_resume" || e.event === "session_load"), false, "the stored session is never reopened for a cut");
    const text = String(prompts().at(-1)?.text);
    assert.ok(text.includes("first prompt PA") && text.includes("reply-one-RA"), "the kept turn's prompt and reply are seeded");
    assert.equal(text.includes("PB") || text.includes("RB"), false, "nothing after afterTurnId");
    assert.ok(text.indexOf("reply-one-RA") < text.indexOf("fork prompt PF"), "the history goes ahead of the prompt");
    // The fork's next turn continues that session: no second seed.
    await turn(c, fork, "fork again PG");
    assert.equal(String(prompts().at(-1)?.text).includes("reply-one-RA"), false);
  });

  await t.test("P-HIS-04 while a turn of the thread runs: rollback is thread_busy, a fork after it is turn_active", async () => {
    const running = String((await c.submitTurn(source, { text: "STALL now" })).turnId);
    await waitTurn(c, running, ["dispatched", "running"], 20_000);
    assert.equal(await code(c.threads.rollback({ threadId: source, turns: 1 })), "thread_busy");
    assert.equal(await code(c.threads.fork({ threadId: source, afterTurnId: running })), "turn_active");
    await c.turns.cancel(running);
    await waitTurn(c, running, ["cancelled"], 20_000);
    assert.equal(await code(c.threads.fork({ threadId: source, afterTurnId: running })), "history_unavailable", "a cancelled turn is no fork point");
    assert.equal(await code(c.threads.rollback({ threadId: source, turns: 3 })), "rollback_out_of_range", "two completed turns");
  });

  await t.test("P-HIS-07 a pending seed whose payloads a restart took fails the fork's first turn in preparing, before the agent", async () => {
    const lean = String((await c.createThread({ workspace: "ws-1", provider: "resumer", binding: { retention: "metadata-only" } })).threadId);
    const only = await turn(c, lean, "ONE lean prompt PL");
    const { threadId: fork } = await c.threads.fork({ threadId: lean, afterTurnId: only }, "lean-fork", { retention: "metadata-only" });
    c.close();
    await serve.kill("SIGTERM");
    await serve.start();
    c = await serve.client();
    t.after(() => c.close());
    await c.attach(fork, { retention: "metadata-only" });
    const before = prompts().length;
    const turnId = String((await c.submitTurn(fork, { text: "after restart PR" })).turnId);
    const view = await waitTurn(c, turnId, ["failed"], 20_000);
    assert.equal(view.errorCode, "history_unavailable");
    assert.equal(prompts().length, before, "nothing reached the agent");
  });
});

test("P-HIS-10 a history longer than limits.turns.historySeedMaxChars is not seeded: fork and rollback refuse history_too_large", async (t) => {
  const dir = tempDir(t, "aic-history-cap-");
  const agent = scriptedAgent({ resume: true, steps: [{ say: "a reply long enough to pass the small cap of this test" }] }, "capped", dir);
  const serve = engineServe(t, dir, [agent.provider], 1, { historySeedMaxChars: 300 });
  await serve.start();
  const c = await serve.client();
  t.after(() => c.close());
  const threadId = String((await c.createThread({ workspace: "ws-1", provider: "capped" })).threadId);
  const first = await turn(c, threadId, "short");
  await turn(c, threadId, "another prompt that makes the kept history of the next rollback longer than 300 characters");
  await turn(c, threadId, "third");
  assert.equal(await code(c.threads.rollback({ threadId, turns: 1 })), "history_too_large", "the two kept turns exceed the cap");
  const { threadId: fork } = await c.threads.fork({ threadId, afterTurnId: first });
  assert.ok(fork.length > 0, "one short turn fits");
  await turn(c, fork, "on the fork");
  assert.equal(await code(c.threads.rollback({ threadId, turns: 2 })), "resolved", "one kept turn fits");
});
