// Black-box through the SDK against a running `serve` with the scripted ACP
// agent: SIGKILL after the dispatch boundary, fencing across restarts, and
// owner resolution. P-TRN-04/05/06/08, P-ARC-13/14, P-STO-05.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ClientError } from "../../src/client.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { engineServe, readDb, waitTurn } from "../support/engine-serve.ts";
import { tempDir } from "../support/temp.ts";

async function until(fn: () => boolean, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function code(p: Promise<unknown>): Promise<string> {
  try { await p; return "ok"; } catch (e) { return e instanceof ClientError ? e.code : String(e); }
}

test("P-TRN-04 P-TRN-05 P-TRN-06 P-ARC-13 SIGKILL after the dispatch boundary: submission_unknown, fenced across restarts, resolved by the owner, never re-sent", async (t) => {
  const dir = tempDir(t, "aic-restart-");
  const agent = scriptedAgent({ byPrompt: { "ORIGINAL-PROMPT": [{ stall: true }] }, steps: [{ say: "done", messageId: "m1" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 2);
  await serve.start();
  let c = await serve.client();
  const thread = await c.createThread({ workspace: "ws-1", provider: "scripted" });
  const threadId = String(thread.threadId);
  const receipt = await c.submitTurn(threadId, { text: "ORIGINAL-PROMPT" });
  const turnId = String(receipt.turnId);
  await until(() => agent.log().some((e) => e.event === "prompt" && String(e.text).includes("ORIGINAL-PROMPT")), "agent got the prompt");
  assert.equal((await c.call("turns.get", { turnId }) as { state: string }).state, "dispatched");
  c.close();
  await serve.kill("SIGKILL");
  // The agent loses its client and exits: no process left behind.
  await until(() => agent.log().some((e) => e.event === "exit"), "agent exit");

  await serve.start();
  c = await serve.client();
  await c.attach(threadId);
  assert.equal((await c.call("turns.get", { turnId }) as { state: string }).state, "submission_unknown");
  const thread2 = await c.createThread({ workspace: "ws-1", provider: "scripted" });
  const second = String((await c.submitTurn(String(thread2.threadId), { text: "SECOND" })).turnId);
  await new Promise((r) => setTimeout(r, 500));
  assert.equal((await c.call("turns.get", { turnId: second }) as { state: string }).state, "queued");
  c.close();
  await serve.kill("SIGKILL");

  await serve.start();
  c = await serve.client();
  assert.equal((await c.call("turns.get", { turnId }) as { state: string }).state, "submission_unknown");
  await new Promise((r) => setTimeout(r, 500));
  assert.equal((await c.call("turns.get", { turnId: second }) as { state: string }).state, "queued", "fenced across a second restart");
  assert.deepEqual(readDb<{ kind: string }>(serve.databasePath, "SELECT kind FROM workspace_leases WHERE workspace_id = 'ws-1'").map((r) => r.kind), ["fence"]);

  assert.equal(await code(c.command("turns.resolve", { turnId, as: "failed" })), "confirmation_required");
  const bob = await serve.client("bob");
  assert.equal(await code(bob.command("turns.resolve", { turnId, as: "failed", confirmExternalStopped: true })), "not_found");
  bob.close();
  const noResolve = await serve.client("noresolve");
  assert.equal(await code(noResolve.command("turns.resolve", { turnId, as: "failed", confirmExternalStopped: true })), "forbidden");
  noResolve.close();

  const resolved = await c.command("turns.resolve", { turnId, as: "failed", confirmExternalStopped: true }, "resolve-1");
  assert.deepEqual(resolved, { commandId: "resolve-1", turnId, state: "failed" });
  await waitTurn(c, second, ["completed"]);
  const audit = readDb<{ action: string; subject_id: string; details: string }>(serve.databasePath, "SELECT action, subject_id, details FROM audit WHERE subject_id = ?", turnId);
  assert.equal(audit.length, 1);
  assert.equal(audit[0]?.action, "turn_resolved");
  assert.match(String(audit[0]?.details), /"confirmExternalStopped":true/);
  const originals = agent.log().filter((e) => e.event === "prompt" && String(e.text).includes("ORIGINAL-PROMPT"));
  assert.equal(originals.length, 1, "the original prompt reached the agent exactly once");
  c.close();
});

test("P-TRN-08 an owner cancel of a submission_unknown turn resolves it as cancelled, audits and releases the queue", async (t) => {
  const dir = tempDir(t, "aic-cancel-");
  const agent = scriptedAgent({ byPrompt: { "LOST-ONE": [{ stall: true }] }, steps: [{ say: "ok" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 1);
  await serve.start();
  let c = await serve.client();
  const threadId = String((await c.createThread({ workspace: "ws-1", provider: "scripted" })).threadId);
  const turnId = String((await c.submitTurn(threadId, { text: "LOST-ONE" })).turnId);
  await until(() => agent.log().some((e) => e.event === "prompt"), "prompt");
  c.close();
  await serve.kill("SIGKILL");
  await serve.start();
  c = await serve.client();
  await c.attach(threadId);
  const queued = String((await c.submitTurn(threadId, { text: "AFTER" })).turnId);
  assert.deepEqual(await c.command("turns.cancel", { turnId }, "cancel-lost"), { commandId: "cancel-lost", turnId, state: "cancelled" });
  await waitTurn(c, queued, ["completed"]);
  assert.equal(readDb(serve.databasePath, "SELECT 1 FROM audit WHERE subject_id = ?", turnId).length, 1);
  assert.equal(agent.log().filter((e) => e.event === "prompt" && String(e.text).includes("LOST-ONE")).length, 1);
  c.close();
  await serve.kill("SIGTERM");
});

test("P-STO-05 a corrupt row stops startup before recovery starts any agent (spawn counter 0)", async (t) => {
  const dir = tempDir(t, "aic-corrupt-");
  const agent = scriptedAgent({ byPrompt: { HOLD: [{ stall: true }] }, steps: [{ say: "ran" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 1);
  await serve.start();
  const c = await serve.client();
  const threadId = String((await c.createThread({ workspace: "ws-1", provider: "scripted" })).threadId);
  const hold = String((await c.submitTurn(threadId, { text: "HOLD" })).turnId);
  const queued = String((await c.submitTurn(threadId, { text: "WOULD-RUN" })).turnId);
  await until(() => agent.log().some((e) => e.event === "prompt"), "prompt");
  c.close();
  await serve.kill("SIGKILL");
  const { DatabaseSync } = await import("node:sqlite");
  const db = new DatabaseSync(serve.databasePath);
  // Make the queued turn runnable at the next start, then corrupt one retained row.
  db.prepare("UPDATE turns SET state = 'completed' WHERE turn_id = ?").run(hold);
  db.exec("DELETE FROM workspace_leases");
  db.exec("PRAGMA ignore_check_constraints = ON");
  db.prepare("UPDATE turns SET state = 'bogus_state' WHERE turn_id = ?").run(hold);
  db.close();
  const spawnsBefore = agent.log().filter((e) => e.event === "spawn").length;
  await assert.rejects(serve.start(), /serve exited/);
  assert.match(serve.stderr(), /storage_record_invalid/);
  assert.equal(agent.log().filter((e) => e.event === "spawn").length, spawnsBefore);
  const fix = new DatabaseSync(serve.databasePath);
  fix.prepare("UPDATE turns SET state = 'completed' WHERE turn_id = ?").run(hold);
  fix.close();
  await serve.start();
  const c2 = await serve.client();
  await waitTurn(c2, queued, ["completed"]);
  assert.equal(agent.log().filter((e) => e.event === "spawn").length, spawnsBefore + 1, "a valid start does spawn");
  c2.close();
});
