// Cancellation and cross-provider serialization, black-box through the SDK
// against `serve`. P-TRN-01, P-TRN-02, P-ARC-17.
import assert from "node:assert/strict";
import { test } from "node:test";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { engineServe, readDb, waitTurn } from "../support/engine-serve.ts";
import { tempDir } from "../support/temp.ts";

test("P-TRN-01 P-TRN-02 P-ARC-17 a cancelled turn keeps the workspace until the agent confirms; another provider's turn waits", async (t) => {
  const dir = tempDir(t, "aic-cancel-");
  const slow = scriptedAgent({ steps: [{ say: "working" }, { stall: true }], cancelDelayMs: 1_000 }, "slow", dir);
  const quick = scriptedAgent({ steps: [{ say: "quick" }] }, "quick", dir);
  const serve = engineServe(t, dir, [slow.provider, quick.provider], 1, { cancelConfirmMs: 10_000 });
  await serve.start();
  const c = await serve.client();
  const a = String((await c.submitTurn(String((await c.createThread({ workspace: "ws-1", provider: "slow" })).threadId), { text: "A" })).turnId);
  await waitTurn(c, a, ["running"]);
  const b = String((await c.submitTurn(String((await c.createThread({ workspace: "ws-1", provider: "quick" })).threadId), { text: "B" })).turnId);
  assert.deepEqual(await c.command("turns.cancel", { turnId: a }, "cancel-a"), { commandId: "cancel-a", turnId: a, state: "cancelling" });
  await new Promise((r) => setTimeout(r, 400));
  assert.equal((await c.call("turns.get", { turnId: a }) as { state: string }).state, "cancelling", "an interrupt request alone is not completion");
  assert.equal((await c.call("turns.get", { turnId: b }) as { state: string }).state, "queued");
  await waitTurn(c, a, ["cancelled"]);
  await waitTurn(c, b, ["completed"]);
  const leases = readDb<{ turn_id: string; kind: string }>(serve.databasePath, "SELECT turn_id, kind FROM journal WHERE kind LIKE 'lease_%' ORDER BY journal_id").map((r) => `${r.kind}:${r.turn_id === a ? "A" : "B"}`);
  assert.deepEqual(leases, ["lease_acquired:A", "lease_released:A", "lease_acquired:B", "lease_released:B"]);
  assert.equal(quick.log().filter((e) => e.event === "prompt").length, 1);
  c.close();
  await serve.kill("SIGTERM");
});
