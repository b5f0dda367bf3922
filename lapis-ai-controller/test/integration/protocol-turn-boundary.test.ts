// turns.submit at the engine boundary (a fake TurnPort stands in for the
// issue-14 engine): AIC-API-003d, P-TRN-28, P-API-07 for submit, P-API-15.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import type { JournalStore } from "../../src/domain/ports.ts";
import { startService } from "../../src/service.ts";
import { ControllerClient } from "../../src/client.ts";
import { fakeTurnPort } from "../support/fake-turn-port.ts";
import type { Harness } from "../support/protocol-harness.ts";
import { startHarness, TOKENS } from "../support/protocol-harness.ts";
import { startTcpProxy } from "../support/tcp-proxy.ts";
import { tempDir } from "../support/temp.ts";

const CREATE = { workspace: "ws-1", provider: "codex" };

async function withFake(t: Parameters<typeof startHarness>[0]) {
  let harness: Harness | null = null;
  const turns = fakeTurnPort(() => (harness as Harness).store.journal);
  harness = await startHarness(t, { turns });
  return { h: harness, turns };
}

test("AIC-API-003d P-TRN-28 a socket lost before the submit receipt: same AuthSession, commands.get, one submit", async (t) => {
  const { h, turns } = await withFake(t);
  const proxy = await startTcpProxy(Number(new URL(h.url).port));
  t.after(() => proxy.close());
  const client = await ControllerClient.connect({ url: proxy.url, credential: { type: "token", token: TOKENS.appA }, reconnectDelayMs: 20 });
  const session = client.authSessionId;
  const threadId = String((await client.createThread(CREATE)).threadId);
  // The socket dies while the server accepts the command: the receipt never reaches the client.
  turns.onAccept = () => {
    turns.onAccept = null;
    proxy.cut();
  };
  const receipt = await client.submitTurn(threadId, { text: "hello" }, "submit-1");
  assert.equal(receipt.turnId, "turn-1");
  assert.equal(client.authSessionId, session);
  assert.deepEqual(turns.accepted, ["submit-1"]);
  assert.deepEqual(turns.started, ["turn-1"]);
  assert.ok(proxy.accepted >= 2, "the client reconnected and resolved the command by its identity");
  // The same command again, explicitly: the same receipt, no second submit.
  assert.deepEqual(await client.submitTurn(threadId, { text: "hello" }, "submit-1"), receipt);
  await assert.rejects(client.submitTurn(threadId, { text: "other" }, "submit-1"), /command_conflict/);
  assert.equal(turns.accepted.length, 1);
  client.close();
});

test("P-API-15 after a refused reattachment no turn can be submitted on it; a matching one submits", async (t) => {
  const { h, turns } = await withFake(t);
  const creator = await ControllerClient.connect({ url: h.url, credential: { type: "token", token: TOKENS.appA } });
  const binding = { toolEndpoints: ["tools-1"], restricted: false };
  const threadId = String((await creator.createThread({ ...CREATE, binding })).threadId);
  creator.close();
  const other = await ControllerClient.connect({ url: h.url, credential: { type: "token", token: TOKENS.appA } });
  await assert.rejects(other.attach(threadId, { ...binding, restricted: true }), /binding_mismatch/);
  await assert.rejects(other.submitTurn(threadId, "x"), /binding_mismatch/);
  const fresh = await ControllerClient.connect({ url: h.url, credential: { type: "token", token: TOKENS.appA } });
  await assert.rejects(fresh.submitTurn(threadId, "x"), /attachment_required/);
  await fresh.attach(threadId, binding);
  assert.equal((await fresh.submitTurn(threadId, "x")).turnId, "turn-1");
  assert.equal(turns.accepted.length, 1);
  other.close();
  fresh.close();
});

test("AIC-SVC-01 the engine plugs into startService through its TurnPort; turns.submit reaches it once per command", async (t) => {
  let store: { journal: JournalStore } | null = null;
  const turns = fakeTurnPort(() => (store as { journal: JournalStore }).journal);
  const started = await startService({
    databasePath: join(tempDir(t), "c.sqlite"),
    retention: "full",
    sections: { tokens: [{ id: "a", token: "env:T", principal: "alice", application: "notes" }], listen: { port: 0 } },
    env: () => TOKENS.appA,
    turns,
  });
  assert.ok(started.ok);
  store = started.value.store;
  t.after(() => started.value.stop());
  const client = await ControllerClient.connect({ url: String(started.value.readiness.url), credential: { type: "token", token: TOKENS.appA } });
  const threadId = String((await client.createThread(CREATE)).threadId);
  const receipt = await client.submitTurn(threadId, "go", "go-1");
  assert.equal(receipt.turnId, "turn-1");
  assert.deepEqual(await client.submitTurn(threadId, "go", "go-1"), receipt);
  assert.deepEqual(turns.accepted, ["go-1"]);
  assert.deepEqual(turns.started, ["turn-1"]);
  client.close();
});
