// Real-agent lane for thread deletion and token usage, on both executors: the
// real codex-acp + Codex (ACP) and the real `codex app-server` (native),
// launched by `serve`; the only stand-in is the model (the scripted
// Responses-API server), which reports the usage the controller must keep.
// A canary sentence of a thread is in the controller's database, its WAL and
// CODEX_HOME before `threads.delete`, and in none of them after; another
// application's thread keeps its bytes; a replayed delete answers the same.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { startAgentServe } from "../support/agent-serve.ts";
import { FAKE_KEY_ENV } from "../support/codex-home.ts";
import { readDb, waitTurn } from "../support/engine-serve.ts";
import type { ResponsesUsage } from "../support/scripted-responses-api.ts";
import { runCli } from "../support/processes.ts";

/** Paths of every regular file under `dir` that contains `needle` (bytes). */
function filesWith(dir: string, needle: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile() && readFileSync(p).includes(needle)) found.push(p);
    }
  };
  if (existsSync(dir)) walk(dir);
  return found;
}

const USAGE: ResponsesUsage = { input_tokens: 1234, input_tokens_details: { cached_tokens: 200 }, output_tokens: 56, output_tokens_details: { reasoning_tokens: 7 }, total_tokens: 1290 };
const EXPECTED = { inputTokens: 1234, cachedInputTokens: 200, outputTokens: 56, reasoningOutputTokens: 7, totalTokens: 1290 };

for (const executor of ["acp", "native"] as const) {
  test(`real Codex (${executor}): threads.list, usage as the model reported it, and threads.delete erasing DB, WAL and CODEX_HOME`, { timeout: 300_000 }, async (t) => {
    const native = { providers: { codex: { kind: "codex-app-server", envAllowlist: ["CODEX_HOME", FAKE_KEY_ENV], setupTimeoutMs: 60_000, killGraceMs: 3_000 } } };
    const serve = await startAgentServe(t, [], executor === "native" ? native : {});
    const a = await serve.client("a");
    const b = await serve.client("b");
    const canary = `CANARY-forget-me-${executor}-5d1e`;
    const reply = `CANARY-reply-${executor}-8a0c`;
    const other = `CANARY-keep-me-${executor}-2b7f`;
    const instanceDir = join(serve.databasePath, "..");

    const threadA = String((await a.createThread({ workspace: "ws", provider: "codex" })).threadId);
    serve.model.push({ text: [reply], usage: USAGE });
    const turnA = String((await a.submitTurn(threadA, { text: `Please remember: ${canary}` })).turnId);
    await waitTurn(a, turnA, ["completed"], 90_000);
    const threadB = String((await b.createThread({ workspace: "ws", provider: "codex" })).threadId);
    serve.model.push({ text: ["kept"] });
    const turnB = String((await b.submitTurn(threadB, { text: `Keep this: ${other}` })).turnId);
    await waitTurn(b, turnB, ["completed"], 90_000);

    await t.test("P-LIF-10 the turn's usage equals what the model server sent, in turns.get, the event stream and the totals", async () => {
      const view = (await a.call("turns.get", { turnId: turnA })) as { usage: unknown };
      assert.deepEqual(view.usage, EXPECTED);
      const events = (await a.replayAll(threadA)) as { kind: string; turnId: string | null; metadata: Record<string, unknown> }[];
      const reports = events.filter((e) => e.kind === "token_usage" && e.turnId === turnA);
      assert.ok(reports.length >= 1, "the usage report is a transcript event");
      assert.deepEqual(reports.at(-1)?.metadata, EXPECTED);
      const thread = (await a.call("usage.get", { threadId: threadA })) as { totals: Record<string, number> };
      assert.deepEqual(thread.totals, { reportedTurns: 1, unreportedTurns: 0, ...EXPECTED });
      const app = (await a.call("usage.get", {})) as { scope: string; application: string; totals: Record<string, number> };
      assert.equal(app.scope, "application");
      assert.equal(app.application, "notes");
      assert.equal(app.totals.totalTokens, EXPECTED.totalTokens, "app A's totals hold only its own turns");
    });

    await t.test("P-LIF-01 threads.list: the caller's threads only, with first words, activity, turn count and active flag", async () => {
      const listed = (await a.call("threads.list", {})) as { threads: Record<string, unknown>[]; nextCursor: string | null };
      assert.deepEqual(listed.threads.map((r) => r.threadId), [threadA]);
      const row = listed.threads[0] ?? {};
      assert.equal(row.turnCount, 1);
      assert.equal(row.active, false);
      assert.equal(row.title, null);
      assert.equal(row.firstWords, `Please remember: ${canary}`);
      assert.ok(typeof row.lastActivityAt === "number" && row.lastActivityAt > 0);
      assert.equal(listed.nextCursor, null);
      const asB = (await b.call("threads.list", { threadIds: [threadA, threadB] })) as { threads: Record<string, unknown>[] };
      assert.deepEqual(asB.threads.map((r) => r.threadId), [threadB], "another application's id reads as absent");
    });

    const before = { db: filesWith(instanceDir, canary), codex: filesWith(serve.home.codexHome, canary) };
    await t.test("P-LIF-04 before the delete the canary is in the controller's database files and in CODEX_HOME", () => {
      assert.ok(before.db.length > 0, "controller database or WAL holds the canary");
      assert.ok(before.codex.some((p) => p.endsWith(".jsonl")), `Codex's rollout holds it: ${before.codex.join(", ")}`);
    });

    const commandId = `delete-${executor}-1`;
    let receipt: Record<string, unknown> = {};
    await t.test("P-LIF-03 another application cannot delete the thread: not_found, nothing erased", async () => {
      await assert.rejects(b.call("threads.delete", { commandId: "b-tries", threadId: threadA }), (e: { code?: string }) => e.code === "not_found");
    });

    await t.test("P-LIF-02 P-LIF-04 threads.delete erases rows, WAL and the agent's files; the audit keeps id, actor and time only", async () => {
      receipt = (await a.call("threads.delete", { commandId, threadId: threadA })) as Record<string, unknown>;
      assert.equal(receipt.deleted, true);
      assert.equal(receipt.threadId, threadA);
      assert.equal(receipt.agentFiles, "erased");
      assert.deepEqual(filesWith(instanceDir, canary), [], "no controller database file (db, -wal, -shm) holds the canary");
      assert.deepEqual(filesWith(instanceDir, reply), []);
      assert.deepEqual(filesWith(serve.home.codexHome, canary), [], "no file under CODEX_HOME holds the canary");
      assert.deepEqual(filesWith(serve.home.codexHome, reply), []);
      const audit = readDb<{ actor: string; action: string; subject_id: string; details: string }>(serve.databasePath, "SELECT actor, action, subject_id, details FROM audit WHERE action = 'thread_deleted'");
      assert.deepEqual(audit.map((r) => ({ ...r })), [{ actor: "alice/notes", action: "thread_deleted", subject_id: threadA, details: "{}" }]);
      await assert.rejects(a.call("turns.get", { turnId: turnA }), (e: { code?: string }) => e.code === "not_found");
      await assert.rejects(a.call("threads.snapshot", { threadId: threadA }), (e: { code?: string }) => e.code === "not_found");
      assert.deepEqual(((await a.call("threads.list", {})) as { threads: unknown[] }).threads, []);
    });

    await t.test("P-LIF-05 another application's thread keeps its bytes and works on", async () => {
      assert.ok(filesWith(instanceDir, other).length > 0);
      assert.ok(filesWith(serve.home.codexHome, other).length > 0);
      serve.model.push({ text: ["still here"] });
      const next = String((await b.submitTurn(threadB, { text: "and again" })).turnId);
      await waitTurn(b, next, ["completed"], 90_000);
    });

    await t.test("P-LIF-06 a delete replayed with the same commandId answers the same receipt; other input conflicts", async () => {
      const again = (await a.call("threads.delete", { commandId, threadId: threadA })) as Record<string, unknown>;
      assert.deepEqual(again, receipt);
      await assert.rejects(a.call("threads.delete", { commandId, threadId: threadA, cancelActive: true }), (e: { code?: string }) => e.code === "command_conflict");
      await assert.rejects(a.call("threads.delete", { commandId: "fresh", threadId: threadA }), (e: { code?: string }) => e.code === "not_found");
    });

    await t.test("P-LIF-13 P-LIF-04 with the service stopped, the CLI's threads delete erases the other thread from the database and CODEX_HOME", async () => {
      a.close();
      b.close();
      await serve.stop();
      const cli = await runCli(t, "node", ["threads", "delete", threadB, "--config", serve.configPath, "--workspace", join(serve.dir, "controller")], { ...serve.env });
      assert.equal(cli.code, 0, cli.stderr);
      assert.equal((JSON.parse(cli.stdout) as { agentFiles: string }).agentFiles, "erased");
      assert.deepEqual(filesWith(instanceDir, other), []);
      assert.deepEqual(filesWith(serve.home.codexHome, other), []);
    });
  });
}
