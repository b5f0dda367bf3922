// Retention defaults (issue 25 point 2) through the real `serve` and the
// managed child: config.json `retention` and the managed request's `retention`
// apply to every new thread that does not choose; under a metadata-only
// default the prompt and answer canaries reach neither the database nor its
// WAL, and the durable receipt carries the application's `sourceRef`, never
// the text. P-STO-09, P-STO-10.
import assert from "node:assert/strict";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { startManagedController } from "../../src/managed.ts";
import { engineServe, readDb, waitTurn } from "../support/engine-serve.ts";
import { MAIN, PACKAGE_ROOT } from "../support/processes.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { tempDir } from "../support/temp.ts";

const PROMPT_CANARY = "CANARYprompt-retention-7c3e9a51";
const ANSWER_CANARY = "CANARYanswer-retention-2b8d4f06";
const SOURCE_REF = "note:inbox/2026-12-03.md#para-4";

function filesHold(path: string, needle: string): boolean {
  return [path, `${path}-wal`].some((p) => existsSync(p) && readFileSync(p).includes(needle));
}

test("P-STO-09 P-STO-10 config retention metadata-only is every new thread's default: no canary in DB or WAL; the receipt keeps sourceRef, not the text", { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t, "aic-retention-");
  const agent = scriptedAgent({ steps: [{ say: `answer ${ANSWER_CANARY}`, messageId: "m1" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 1, {}, "node", { retention: "metadata-only" });
  await serve.start();
  const c = await serve.client();
  t.after(() => c.close());
  const threadId = String((await c.createThread({ workspace: "ws-1", provider: "scripted" })).threadId);
  const snapshot = (await c.call("threads.snapshot", { threadId })) as { binding: { retention: string } };
  assert.equal(snapshot.binding.retention, "metadata-only", "a thread that does not choose takes the configured default");
  const chosen = String((await c.createThread({ workspace: "ws-1", provider: "scripted", binding: { retention: "full" } })).threadId);
  assert.equal(((await c.call("threads.snapshot", { threadId: chosen })) as { binding: { retention: string } }).binding.retention, "full", "a thread that chooses keeps its choice");

  for (const bad of ["", "line\nbreak", "x".repeat(257), 7]) {
    await assert.rejects(c.command("turns.submit", { threadId, input: "x", sourceRef: bad }), { code: "invalid_params" });
  }
  const receipt = await c.command("turns.submit", { threadId, input: { text: `prompt ${PROMPT_CANARY}` }, sourceRef: SOURCE_REF });
  assert.equal(receipt.sourceRef, SOURCE_REF);
  assert.equal(receipt.retention, "metadata-only");
  assert.deepEqual(Object.keys(receipt).sort(), ["attemptOf", "commandId", "retention", "sourceRef", "threadId", "turnId"]);
  const turnId = String(receipt.turnId);
  assert.equal((await waitTurn(c, turnId, ["completed", "failed"])).state, "completed");
  assert.ok(agent.log().some((e) => e.event === "prompt" && JSON.stringify(e).includes(PROMPT_CANARY)), "the agent got the prompt");

  const stored = readDb<{ receipt: string }>(serve.databasePath, "SELECT receipt FROM commands WHERE command_id = ?", String(receipt.commandId));
  assert.deepEqual(JSON.parse(stored[0]?.receipt ?? "{}"), receipt, "the durable receipt is the acknowledgement");
  assert.equal(stored[0]?.receipt.includes(PROMPT_CANARY), false);
  assert.deepEqual(await c.call("commands.get", { commandId: String(receipt.commandId) }), receipt);
  for (const canary of [PROMPT_CANARY, ANSWER_CANARY]) assert.equal(filesHold(serve.databasePath, canary), false, `${canary} stays out of the database and WAL`);
  await serve.kill("SIGTERM");
  for (const canary of [PROMPT_CANARY, ANSWER_CANARY]) assert.equal(filesHold(serve.databasePath, canary), false, `${canary} stays out after shutdown`);
});

test("P-STO-09 the managed request's retention is every new thread's default", { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t, "aic-managed-retention-");
  // The launcher a managed child is started through, pointing at this checkout's CLI.
  const launcher = join(dir, "lapis-ai-controller");
  writeFileSync(launcher, `#!/bin/sh\nexec "${join(PACKAGE_ROOT, "node_modules", ".bin", "node")}" "${MAIN}" "$@"\n`);
  chmodSync(launcher, 0o755);
  const token = "CANARYtok-managed-retention-5e2a9c71d4b8";
  const managed = await startManagedController({ token, databasePath: join(dir, "controller.sqlite"), executable: launcher, home: dir, path: "/usr/bin:/bin", retention: "metadata-only" });
  assert.ok(managed.ok, JSON.stringify(managed));
  t.after(() => managed.value.stop());
  const c = await managed.value.connect();
  t.after(() => c.close());
  const threadId = String((await c.createThread({ workspace: "ws-1", provider: "any" })).threadId);
  const snapshot = (await c.call("threads.snapshot", { threadId })) as { binding: { retention: string } };
  assert.equal(snapshot.binding.retention, "metadata-only");
  assert.deepEqual(await c.attach(threadId), { threadId, configVersion: 1, lastSeq: 1 }, "a reattach that states no retention matches the default");
});
