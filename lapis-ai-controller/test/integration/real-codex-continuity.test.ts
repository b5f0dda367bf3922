// Real-agent lane for issue 25 points 1 and 5: the real codex-acp 1.13.1 with
// the real Codex, launched by `serve`, driven through the SDK; the only stand-in
// is Codex's model (test/support/scripted-responses-api.ts), which records
// every request. An application context endpoint's text reaches the model's
// input; a fact given in turn 1 is in the model's input of turn 2 after a
// SIGKILL and restart of serve (the thread's native session was resumed).
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ControllerClient } from "../../src/client.ts";
import { startAgentServe } from "../support/agent-serve.ts";
import { readDb, waitTurn } from "../support/engine-serve.ts";

const CONTEXT_1 = "CONTEXT-CANARY-first-6c41";
const CONTEXT_2 = "CONTEXT-CANARY-second-9e27";
const FACT = "ZEBRA-4417";

function count(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

test("real codex-acp + Codex: context endpoints and thread continuity across a serve SIGKILL", { timeout: 300_000 }, async (t) => {
  const serve = await startAgentServe(t, [], { limits: { turns: { contextDeadlineMs: 20_000 } } });
  const binding = { contextSources: ["ctx-real"] };
  const withContext = async (c: ControllerClient, text: string) => {
    await c.registerEndpoint({ endpointId: "ctx-real", kind: "context", context: () => ({ context: text }) });
  };
  let c = await serve.client();
  await withContext(c, CONTEXT_1);
  const threadId = String((await c.createThread({ workspace: "ws", provider: "codex", binding })).threadId);

  await t.test("P-ARC-10 P-SDK-13 P-SDK-02 the context endpoint's text reaches the real model's input, once, with the prompt", async () => {
    serve.model.push({ text: ["noted"] });
    const turnId = String((await c.submitTurn(threadId, { text: `Remember this code word: ${FACT}.` })).turnId);
    await waitTurn(c, turnId, ["completed"], 90_000);
    const input = JSON.stringify(serve.model.requests.at(-1)?.input ?? null);
    assert.equal(count(input, CONTEXT_1), 1, "the context is in the model input exactly once");
    assert.ok(input.includes(FACT));
  });

  await t.test("P-ARC-19 after SIGKILL and restart of serve, turn 2's model input still carries turn 1's fact (native session resumed)", async () => {
    c.close();
    await serve.restart("SIGKILL");
    c = await serve.client();
    await withContext(c, CONTEXT_2);
    await c.attach(threadId, binding);
    serve.model.push({ text: [FACT] });
    const before = serve.model.requests.length;
    const turnId = String((await c.submitTurn(threadId, { text: "Which code word did I give you?" })).turnId);
    await waitTurn(c, turnId, ["completed"], 90_000);
    assert.ok(serve.model.requests.length > before);
    const input = JSON.stringify(serve.model.requests.at(-1)?.input ?? null);
    assert.ok(input.includes(FACT), "turn 1's fact is in turn 2's model input");
    assert.ok(input.includes("Which code word did I give you?"));
    assert.equal(count(input, CONTEXT_2), 1, "this turn's context, once");
    const resumed = readDb<{ metadata: string }>(serve.databasePath, "SELECT metadata FROM journal WHERE turn_id = ? AND kind = 'session_resumed'", turnId);
    assert.deepEqual(resumed.map((r) => JSON.parse(r.metadata)), [{ method: "session/resume" }], "codex-acp advertises session/resume, so it is used");
    // The resumed session is put back into the user-reviewed mode, as a new one is.
    const mode = readDb<{ metadata: string }>(serve.databasePath, "SELECT metadata FROM journal WHERE turn_id = ? AND kind = 'native_mode'", turnId);
    assert.deepEqual(mode.map((r) => JSON.parse(r.metadata)), [{ requested: "read-only", result: "applied", current: "read-only" }]);
    const events = (await c.replayAll(threadId)) as { kind: string }[];
    assert.equal(events.some((e) => e.kind === "context_reset"), false);
  });
});
