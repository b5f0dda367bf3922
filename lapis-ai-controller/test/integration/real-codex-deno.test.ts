// The real agent under a Deno-run serve: the acpx registry launch with the
// absolute-node correction, the redaction worker (Atomics wait on Deno's
// main thread) and the MCP tool bridge (node:http under Deno). One turn, a
// split canary and one application tool call. P-PRV-02, P-CAP-08, P-CAP-10, P-ARC-10.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { test } from "node:test";
import { startAgentServe } from "../support/agent-serve.ts";
import { waitTurn } from "../support/engine-serve.ts";
import { tool } from "../support/tool-spec.ts";

const KEY = "sk-proj-CANARYdenoLane0123456789abcdefghijklmnop";

test("P-PRV-02 P-CAP-08 P-CAP-10 P-ARC-10 real codex-acp under a Deno serve: redaction worker and tool bridge work", { timeout: 180_000 }, async (t) => {
  const serve = await startAgentServe(t, [
    { text: [`key ${KEY.slice(0, 10)}`, `${KEY.slice(10)} end`] },
    { call: { name: "note_write", namespace: "mcp__lapis_app_tools", arguments: { text: "deno" } } },
    { text: ["written"] },
  ], {}, {}, "deno");
  const c = await serve.client();
  const threadId = String((await c.createThread({ workspace: "ws", provider: "codex" })).threadId);
  const calls: unknown[] = [];
  await c.registerEndpoint({ endpointId: "tools", kind: "tools", threadId, tools: { note_write: tool((a: unknown) => { calls.push(a); return "ok"; }) } });
  const first = String((await c.submitTurn(threadId, { text: "say the key" })).turnId);
  await waitTurn(c, first, ["completed"], 60_000);
  const second = String((await c.submitTurn(threadId, { text: "write" })).turnId);
  const end = Date.now() + 60_000;
  for (;;) {
    const v = (await c.call("turns.get", { turnId: second })) as { state: string; interactions: { interactionId: string; state: string; optionIds: string[] }[] };
    if (v.state === "completed") break;
    for (const i of v.interactions.filter((x) => x.state === "pending")) await c.command("interactions.respond", { turnId: second, interactionId: i.interactionId, optionId: "allow_once" });
    assert.ok(Date.now() < end, `stuck in ${v.state}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.deepEqual(calls, [{ text: "deno" }]);
  const db = [serve.databasePath, `${serve.databasePath}-wal`].filter((p) => existsSync(p)).map((p) => readFileSync(p).toString("latin1")).join("");
  assert.equal(db.includes(KEY.slice(10)), false);
  assert.ok(db.includes("[redacted:openai_api_key]"));
});
