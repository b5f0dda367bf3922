// Real-agent lane of the history controls on both executors: `serve` with the
// real Codex 0.156.1, once through the real codex-acp 1.13.1 (kind acp: cuts
// are seeded from the journal) and once as `codex app-server` (native
// thread/fork, thread/revert, turn/steer, thread/compact/start). The only
// stand-in is Codex's model (test/support/scripted-responses-api.ts), which
// records every request: the assertions are on what the model receives.
import assert from "node:assert/strict";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import type { ControllerClient } from "../../src/client.ts";
import { startAgentServe, type AgentServe } from "../support/agent-serve.ts";
import { FAKE_KEY_ENV } from "../support/codex-home.ts";
import { readDb, waitTurn } from "../support/engine-serve.ts";

/** The terminal chat's `/fork K` helper (plain JavaScript), checked against a real replay. */
const PRESENT = new URL("../../docs/examples/terminal-chat/present.mjs", import.meta.url).href;
const { forkPoints } = (await import(PRESENT)) as { forkPoints(events: readonly object[]): string[] };

const FACT_A = "FACT-AARDVARK-1187";
const FACT_B = "FACT-BISON-5521";
const FORK_Q = "FORKQ-which-animal-3310";
const SOURCE_Q = "SOURCEQ-list-animals-7702";
const AFTER_ROLLBACK_Q = "ROLLQ-what-remains-4096";

type Event = { kind: string; turnId?: string | null; metadata?: Record<string, unknown> };

function lastInput(serve: AgentServe): string {
  return JSON.stringify(serve.model.requests.at(-1)?.input ?? null);
}

async function turn(serve: AgentServe, c: ControllerClient, threadId: string, text: string, reply: string): Promise<string> {
  serve.model.push({ text: [reply] });
  const turnId = String((await c.submitTurn(threadId, { text })).turnId);
  await waitTurn(c, turnId, ["completed"], 90_000);
  return turnId;
}

async function code(p: Promise<unknown>): Promise<string> {
  try { await p; } catch (e) { return String((e as { code?: unknown }).code); }
  return "resolved";
}

const EXECUTORS = [
  { name: "codex-acp (kind acp)", native: false, providers: undefined },
  { name: "native codex app-server", native: true, providers: { codex: { kind: "codex-app-server", envAllowlist: ["CODEX_HOME", FAKE_KEY_ENV], setupTimeoutMs: 60_000, killGraceMs: 3_000 } } },
] as const;

for (const ex of EXECUTORS) {
  test(`history controls through serve on ${ex.name}`, { timeout: 600_000 }, async (t) => {
    const serve = await startAgentServe(t, [], ex.providers === undefined ? {} : { providers: ex.providers });
    let c = await serve.client();
    const source = String((await c.createThread({ workspace: "ws", provider: "codex" })).threadId);
    const t1 = await turn(serve, c, source, `Remember the first animal: ${FACT_A}.`, "noted the first");
    const t2 = await turn(serve, c, source, `Remember the second animal: ${FACT_B}.`, "noted the second");
    let fork = "";

    await t.test("P-HIS-01 P-HIS-02 P-HIS-03 the fork's next turn sees the source's facts through afterTurnId and none after", async () => {
      const sourceBefore = JSON.stringify(await c.replayAll(source));
      const receipt = await c.threads.fork({ threadId: source, afterTurnId: t1 }, "fork-cmd-1");
      assert.equal(JSON.stringify(await c.replayAll(source)), sourceBefore, "the source's journal is not touched");
      fork = receipt.threadId;
      assert.equal(receipt.sourceThreadId, source);
      const again = await c.threads.fork({ threadId: source, afterTurnId: t1 }, "fork-cmd-1");
      assert.deepEqual(again, receipt, "a repeat of the command answers the same receipt (no second fork)");
      assert.equal(readDb(serve.databasePath, "SELECT thread_id FROM threads").length, 2);
      await turn(serve, c, fork, `${FORK_Q}: which animals do you know?`, "the aardvark");
      const input = lastInput(serve);
      assert.ok(input.includes(FACT_A), "the fork's model input carries the fact of the kept turn");
      assert.equal(input.includes(FACT_B), false, "and nothing after afterTurnId");
      const cut = readDb<{ metadata: string }>(serve.databasePath, "SELECT metadata FROM journal WHERE thread_id = ? AND kind = 'history_cut'", fork);
      assert.deepEqual(cut.map((r) => JSON.parse(r.metadata)), [{ method: ex.native ? "thread/fork" : "seeded" }]);
      const events = (await c.replayAll(fork)) as Event[];
      assert.deepEqual(events.slice(0, 2).map((e) => e.kind), ["thread_created", "thread_forked"]);
    });

    await t.test("P-HIS-02 the source's next turn sees its own history and nothing of the fork", async () => {
      await turn(serve, c, source, `${SOURCE_Q}: list the animals.`, "aardvark and bison");
      const input = lastInput(serve);
      assert.ok(input.includes(FACT_A) && input.includes(FACT_B));
      assert.equal(input.includes(FORK_Q), false, "the fork's prompt never reaches the source");
    });

    await t.test("P-HIS-04 AIC-DEMO-07 rollback: the last two turns leave the agent's context; the journal keeps them, marked", async () => {
      const receipt = await c.threads.rollback({ threadId: source, turns: 2 }, "rollback-cmd-1");
      assert.deepEqual({ turns: receipt.turns, kept: receipt.keptThroughTurnId }, { turns: 2, kept: t1 });
      assert.deepEqual(await c.threads.rollback({ threadId: source, turns: 2 }, "rollback-cmd-1"), receipt, "idempotent");
      assert.equal(await code(c.threads.rollback({ threadId: source, turns: 2 })), "rollback_out_of_range", "only one kept turn is left");
      await turn(serve, c, source, `${AFTER_ROLLBACK_Q}: which animals remain?`, "the aardvark");
      const input = lastInput(serve);
      assert.ok(input.includes(FACT_A), "the kept turn stays in the agent's context");
      assert.equal(input.includes(FACT_B), false, "the rolled-back turn is gone from it");
      assert.equal(input.includes(SOURCE_Q), false);
      const cut = readDb<{ metadata: string }>(serve.databasePath, "SELECT j.metadata FROM journal j JOIN turns t ON t.turn_id = j.turn_id WHERE j.thread_id = ? AND j.kind = 'history_cut'", source);
      assert.deepEqual(cut.map((r) => JSON.parse(r.metadata)), [{ method: ex.native ? "thread/revert" : "seeded" }]);
      const events = (await c.replayAll(source)) as Event[];
      const marked = events.filter((e) => e.kind === "turn_rolled_back").map((e) => e.turnId);
      assert.equal(marked.length, 2);
      assert.ok(marked.includes(t2));
      assert.ok(events.some((e) => e.kind === "user_prompt" && e.turnId === t2), "the rolled-back turn's prompt is still in the journal");
      assert.equal(events.filter((e) => e.kind === "thread_rolled_back").length, 1);
      assert.equal(forkPoints(events).length, 2, "the chat's /fork counts the kept turn and the one after the rollback");
      assert.equal(forkPoints(events)[0], t1);
    });

    await t.test("P-HIS-08 another application cannot fork, roll back, compact or steer this application's threads", async () => {
      const b = await serve.client("b");
      assert.equal(await code(b.threads.fork({ threadId: source, afterTurnId: t1 })), "not_found");
      assert.equal(await code(b.threads.rollback({ threadId: source, turns: 1 })), "not_found");
      assert.equal(await code(b.threads.compact(source)), "not_found");
      assert.equal(await code(b.turns.steer(t1, { text: "hi" })), "not_found");
      assert.equal(readDb(serve.databasePath, "SELECT thread_id FROM threads").length, 2, "no thread was created for b");
    });

    await t.test("P-HIS-05 P-HIS-06 steer and compaction: native where Codex has them, refused with stable codes on ACP", async () => {
      if (!ex.native) {
        assert.equal(await code(c.turns.steer(t1, { text: "more" })), "steer_unsupported");
        assert.equal(await code(c.threads.compact(source)), "unsupported");
        return;
      }
      // Steer: the running turn (its reply streams slowly) gets more input; Codex sends it to the model in the same turn.
      serve.model.push({ text: ["one ", "two ", "three ", "four ", "five"], gapMs: 400 }, { text: ["steered answer"] });
      const before = serve.model.requests.length;
      const running = String((await c.submitTurn(source, { text: "count slowly" })).turnId);
      await serve.model.waitForRequests(before + 1, 60_000);
      const steered = await c.turns.steer(running, { text: "STEER-CANARY-8841 also name a bird" }, "steer-cmd-1");
      assert.deepEqual(await c.turns.steer(running, { text: "STEER-CANARY-8841 also name a bird" }, "steer-cmd-1"), steered, "idempotent");
      await waitTurn(c, running, ["completed"], 90_000);
      assert.ok(serve.model.requests.slice(before).some((r) => JSON.stringify(r.input).includes("STEER-CANARY-8841")), "the steer input reached the model in that turn");
      assert.equal(readDb(serve.databasePath, "SELECT turn_id FROM turns WHERE thread_id = ?", source).length, 5, "no new turn");
      const delivered = readDb(serve.databasePath, "SELECT journal_id FROM journal WHERE turn_id = ? AND kind = 'steer_delivered'", running);
      assert.equal(delivered.length, 1);
      assert.equal(await code(c.turns.steer(running, { text: "late" })), "turn_not_running");
      // Compaction: requested now, run by Codex at the start of the next turn, journaled as an event the application sees.
      const compact = await c.threads.compact(source, "compact-cmd-1");
      assert.equal(compact.compaction, "before_next_turn");
      serve.model.push({ text: ["SUMMARY: the aardvark"] });
      const n = serve.model.requests.length;
      const next = await turn(serve, c, source, "after compaction", "compacted reply");
      assert.ok(serve.model.requests.slice(n).some((r) => JSON.stringify(r.input).includes("CONTEXT CHECKPOINT COMPACTION")), "Codex asked the model to compact");
      const events = (await c.replayAll(source)) as Event[];
      assert.ok(events.some((e) => e.kind === "context_compacted" && e.turnId === next));
    });

    await t.test("P-HIS-07 metadata-only payloads gone after a restart: a fork from that point is refused with history_unavailable", async () => {
      const lean = String((await c.createThread({ workspace: "ws", provider: "codex", binding: { retention: "metadata-only" } })).threadId);
      const only = await turn(serve, c, lean, "a lean turn", "lean reply");
      c.close();
      await serve.restart();
      c = await serve.client();
      assert.equal(await code(c.threads.fork({ threadId: lean, afterTurnId: only })), "history_unavailable");
      assert.equal(await code(c.threads.fork({ threadId: fork, afterTurnId: "no-such-turn" })), "not_found");
    });
  });
}

for (const ex of EXECUTORS) {
  test(`P-HIS-06 a compaction Codex does on its own is journaled as context_compacted on ${ex.name}`, { timeout: 300_000 }, async (t) => {
    const serve = await startAgentServe(t, [], ex.providers === undefined ? {} : { providers: ex.providers });
    // Codex compacts on its own once the thread's tokens pass this limit (the scripted model reports 15 per reply).
    const toml = join(serve.home.codexHome, "config.toml");
    writeFileSync(toml, `model_auto_compact_token_limit = 10\n${readFileSync(toml, "utf8")}`);
    const c = await serve.client();
    const threadId = String((await c.createThread({ workspace: "ws", provider: "codex" })).threadId);
    await turn(serve, c, threadId, `Remember ${FACT_A}.`, "noted");
    serve.model.push({ text: ["SUMMARY: the aardvark was mentioned"] });
    const n = serve.model.requests.length;
    const second = await turn(serve, c, threadId, "and now?", "still here");
    assert.ok(serve.model.requests.slice(n).some((r) => JSON.stringify(r.input).includes("CONTEXT CHECKPOINT COMPACTION")), "Codex compacted on its own");
    const events = (await c.replayAll(threadId)) as Event[];
    const compacted = events.filter((e) => e.kind === "context_compacted");
    assert.ok(compacted.length >= 1 && compacted.every((e) => e.turnId === second), "the application sees it in the turn it happened in");
    assert.equal(events.some((e) => e.kind === "compaction_requested"), false, "nobody asked for it");
  });
}

test("P-HIS-02 native: when Codex refuses thread/fork (the source's rollout is gone), the fork's turn runs on a new thread seeded from the journal", { timeout: 300_000 }, async (t) => {
  const native = EXECUTORS[1];
  const serve = await startAgentServe(t, [], { providers: native.providers });
  const c = await serve.client();
  const source = String((await c.createThread({ workspace: "ws", provider: "codex" })).threadId);
  const t1 = await turn(serve, c, source, `Remember the first animal: ${FACT_A}.`, "noted the first");
  await turn(serve, c, source, `Remember the second animal: ${FACT_B}.`, "noted the second");
  const { threadId: fork } = await c.threads.fork({ threadId: source, afterTurnId: t1 });
  const sessions = join(serve.home.codexHome, "sessions");
  const rollouts = readdirSync(sessions, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".jsonl"));
  assert.ok(rollouts.length > 0);
  for (const f of rollouts) rmSync(join(sessions, f));
  await turn(serve, c, fork, `${FORK_Q}: which animals do you know?`, "the aardvark");
  const input = lastInput(serve);
  assert.ok(input.includes(FACT_A) && input.includes("noted the first"), "the kept turn arrives as the seed");
  assert.equal(input.includes(FACT_B), false);
  const cut = readDb<{ metadata: string }>(serve.databasePath, "SELECT metadata FROM journal WHERE thread_id = ? AND kind = 'history_cut'", fork);
  assert.deepEqual(cut.map((r) => JSON.parse(r.metadata)), [{ method: "seeded" }]);
});
