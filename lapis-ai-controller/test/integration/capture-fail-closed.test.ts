// Fail-closed redaction inside the turn engine, with the scripted ACP agent
// (fault-injection stand-in) and a scanner worker made to hang: the write
// holding the secret fails closed (nothing raw in the database), the service
// stays up, and the next turn is redacted by a fresh worker. P-CAP-08, P-CAP-10.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { blockRedactingExecutor } from "../../src/capture/event-blocks.ts";
import { PinnedSecretRedactor } from "../../src/capture/redactor.ts";
import { ScanClient } from "../../src/capture/scan-client.ts";
import { TurnService } from "../../src/domain/turn-service.ts";
import { AcpExecutor } from "../../src/execution/acp-executor.ts";
import { currentLaunchHost } from "../../src/execution/acp-launch.ts";
import { engineStore } from "../../src/persistence/engine-store.ts";
import { makeWorkspaces, openStore, productionCommands, waitState } from "../support/engine-fixture.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";

const KEY_A = "sk-proj-CANARYfailclosedAAAAAAAAAAAAAAAAAAAA";
const KEY_B = "sk-proj-CANARYfreshworkerBBBBBBBBBBBBBBBBBBBB";
const FAULTY = new URL("../support/faulty-scan-worker.ts", import.meta.url);

test("P-CAP-08 P-CAP-10 a hung scanner fails the write closed, the service stays up, a fresh worker redacts the next turn", { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "aic-failclosed-"));
  const agent = scriptedAgent({ byPrompt: {
    one: [{ say: `FAULT:HANG ${KEY_A.slice(0, 12)}`, messageId: "m1" }, { say: KEY_A.slice(12), messageId: "m1" }],
    two: [{ say: `then ${KEY_B.slice(0, 20)}`, messageId: "m2" }, { say: `${KEY_B.slice(20)} end`, messageId: "m2" }],
  }, steps: [] }, "scripted", dir);
  const dbPath = join(dir, "controller.db");
  const sqlite = openStore(dbPath);
  const scanner = new ScanClient({ deadlineMs: 800, resultBufferBytes: 64 * 1024 }, FAULTY);
  const redactor = new PinnedSecretRedactor(scanner);
  const store = engineStore(sqlite, () => {}, redactor);
  const executor = blockRedactingExecutor(new AcpExecutor({ providers: [agent.provider], host: currentLaunchHost(), env: process.env, tmpRoot: dir }), redactor);
  const service = new TurnService({ store, executor, workspaces: makeWorkspaces(dir, 1), limits: {}, newId: () => randomUUID() });
  service.start();
  t.after(async () => { await service.close(); await scanner.close(); sqlite.close(); rmSync(dir, { recursive: true, force: true }); });
  const commands = productionCommands(sqlite, service);
  const threadId = commands.createThread();
  const one = commands.submit(threadId, "c1", "one");
  assert.ok(one.ok);
  assert.equal(await waitState({ store } as never, String(one.value.record.receipt.turnId), ["completed"], 20_000), "completed");
  const two = commands.submit(threadId, "c2", "two");
  assert.ok(two.ok);
  assert.equal(await waitState({ store } as never, String(two.value.record.receipt.turnId), ["completed"], 20_000), "completed");
  const bytes = readFileSync(dbPath).toString("latin1") + readFileSync(`${dbPath}-wal`).toString("latin1");
  for (const part of [KEY_A.slice(12), KEY_B.slice(0, 20).slice(5), KEY_B.slice(20)]) assert.equal(bytes.includes(part), false);
  const texts = store.journal({ threadId }).filter((e) => e.type === "text").map((e) => String(e.data.text));
  assert.equal(texts.some((x) => x.includes("FAULT:HANG")), false, "the block whose scan hung was not written");
  assert.deepEqual(texts.filter((x) => x.includes("redacted") || x.includes("end")), ["then [redacted:openai_api_key]", " end"]);
  assert.ok(scanner.restarts >= 1);
});
