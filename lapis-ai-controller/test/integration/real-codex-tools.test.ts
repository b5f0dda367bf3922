// Application tools with the real agent: the real Codex (through codex-acp)
// calls tools over the controller's MCP bridge. AIC-API-004d, P-API-08,
// P-ARC-10, P-ARC-23, P-PRV-11.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { test } from "node:test";
import type { ControllerClient } from "../../src/client.ts";
import { startAgentServe } from "../support/agent-serve.ts";
import { waitTurn } from "../support/engine-serve.ts";
import { descendants, procText } from "../support/proc-tree.ts";
import { tool } from "../support/tool-spec.ts";

const NS = "mcp__lapis_app_tools";
const call = (name: string, args: Record<string, unknown>) => ({ call: { name, namespace: NS, arguments: args } });

type Interaction = { interactionId: string; state: string; optionIds: string[] };

/** Runs one turn; approves the agent's tool-call permission requests (ask policy) until it ends. */
async function turn(c: ControllerClient, threadId: string, text: string): Promise<string> {
  const turnId = String((await c.submitTurn(threadId, { text })).turnId);
  const end = Date.now() + 60_000;
  for (;;) {
    const v = (await c.call("turns.get", { turnId })) as { state: string; interactions: Interaction[] };
    if (["completed", "failed", "cancelled", "interrupted"].includes(v.state)) return v.state;
    for (const i of v.interactions.filter((x) => x.state === "pending")) {
      await c.command("interactions.respond", { turnId, interactionId: i.interactionId, optionId: i.optionIds.includes("allow_once") ? "allow_once" : (i.optionIds[0] as string) });
    }
    if (Date.now() > end) throw new Error(`turn ${turnId} stuck in ${v.state}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function lastToolOutput(requests: Record<string, unknown>[]): string {
  const input = (requests.at(-1)?.input ?? []) as { type?: string; output?: unknown }[];
  return JSON.stringify(input.filter((i) => i.type === "function_call_output").at(-1)?.output ?? null);
}

test("AIC-API-004d P-API-08 P-ARC-10 P-ARC-23 P-PRV-11 P-CAP-05 app tools over the MCP bridge with the real agent", { timeout: 240_000 }, async (t) => {
  const serve = await startAgentServe(t, []);
  const a = await serve.client("a");
  const b = await serve.client("b");
  const threadA = String((await a.createThread({ workspace: "ws", provider: "codex" })).threadId);
  const threadB = String((await b.createThread({ workspace: "ws", provider: "codex" })).threadId);
  const seen = { a: [] as unknown[], b: [] as unknown[] };
  const noteSchema = { type: "object", properties: { text: { type: "string", maxLength: 2000, description: "the note's text" } }, required: ["text"], additionalProperties: false } as const;
  await a.registerEndpoint({ endpointId: "tools-a", kind: "tools", threadId: threadA, tools: { note_write: tool((args: unknown) => { seen.a.push(args); return { saved: true }; }, "Writes one note into the user's notebook.", noteSchema) } });
  const captureLog: string[] = [];
  await a.registerEndpoint({
    endpointId: "tools-cap", kind: "tools", threadId: threadA, capture: true, readOnly: ["note_read"],
    tools: { note_commit: tool(() => { captureLog.push("tool:note_commit"); return "committed"; }), note_read: tool(() => { captureLog.push("tool:note_read"); return "content"; }) },
    handle: async (operation, params) => {
      captureLog.push(`${operation}:${String(params.tool)}`);
      if (operation !== "capture.begin") return null;
      await new Promise((r) => setTimeout(r, 300));
      // The owner acknowledges mutating work and refuses the read: the read still runs (advisory).
      return { ack: params.tool === "note_commit" };
    },
  });
  await b.registerEndpoint({ endpointId: "tools-b", kind: "tools", threadId: threadB, tools: { mail_send: tool((args: unknown) => { seen.b.push(args); return { sent: true }; }) } });

  await t.test("P-API-08 P-ARC-10 A's agent calls A's registered tool; the handler runs with the agent's arguments", async () => {
    serve.model.push(call("note_write", { text: "from A" }), { text: ["noted"] });
    assert.equal(await turn(a, threadA, "write a note"), "completed");
    assert.deepEqual(seen.a, [{ text: "from A" }]);
    assert.match(lastToolOutput(serve.model.requests), /saved/);
    // The tools the agent was offered are exactly A's.
    const offered = JSON.stringify((serve.model.requests.at(-1)?.tools as Record<string, unknown>[]).filter((x) => x.name === NS));
    assert.match(offered, /note_write/);
    assert.doesNotMatch(offered, /mail_send/);
  });

  await t.test("P-PRV-11 the model's request carries the tool's registered description and input schema; arguments outside it never reach the handler", async () => {
    const offered = JSON.stringify((serve.model.requests.at(-1)?.tools as Record<string, unknown>[]).filter((x) => x.name === NS));
    assert.match(offered, /Writes one note into the user's notebook\./);
    // Codex passes the schema on in its own subset (it drops maxLength); the bridge still enforces the whole schema.
    assert.ok(offered.includes('"properties":{"text":{"type":"string","description":"the note\'s text"}},"required":["text"],"additionalProperties":false'), offered);
    assert.doesNotMatch(offered, /Application tool note_write/);
    serve.model.push(call("note_write", { text: "x".repeat(2001) }), { text: ["refused"] });
    assert.equal(await turn(a, threadA, "write a bad note"), "completed");
    assert.equal(seen.a.length, 1, "the handler did not run");
    assert.match(lastToolOutput(serve.model.requests), /invalid_params/);
  });

  await t.test("AIC-API-004d B's agent never reaches A's tool: A's handler count stays 1, B's handler count stays 0", async () => {
    serve.model.push(call("note_write", { text: "from B" }), { text: ["tried"] });
    assert.equal(await turn(b, threadB, "write a note too"), "completed");
    assert.equal(seen.a.length, 1);
    assert.equal(seen.b.length, 0);
    const offered = JSON.stringify((serve.model.requests.at(-1)?.tools as Record<string, unknown>[]).filter((x) => x.name === NS));
    assert.match(offered, /mail_send/);
    assert.doesNotMatch(offered, /note_write/);
  });

  await t.test("P-CAP-01 P-CAP-02 P-CAP-03 through the SDK: a mutating tool waits for the capture begin ack and sends finish; a read runs although capture refused", async () => {
    serve.model.push(call("note_commit", {}), call("note_read", {}), { text: ["both done"] });
    assert.equal(await turn(a, threadA, "commit and read"), "completed");
    assert.deepEqual(captureLog, [
      "capture.begin:note_commit", "tool:note_commit", "capture.finish:note_commit",
      "capture.begin:note_read", "tool:note_read", "capture.finish:note_read",
    ]);
  });

  await t.test("AIC-API-004d the per-session bridge bearer never reaches argv, logs or the database", () => {
    const cmdlines = descendants(serve.pid).map((pid) => procText(pid, "cmdline"));
    assert.ok(cmdlines.some((c) => c.includes("codex")), "the agent processes are live");
    for (const c of cmdlines) assert.doesNotMatch(c, /Bearer|Authorization/);
    const db = [serve.databasePath, `${serve.databasePath}-wal`].filter((p) => existsSync(p)).map((p) => readFileSync(p).toString("latin1")).join("");
    assert.doesNotMatch(db, /Bearer |Authorization/);
    assert.doesNotMatch(serve.stdout() + serve.stderr(), /Bearer |Authorization/);
  });

  await t.test("P-PRV-11 replay and a fresh subscription never re-invoke a handler", async () => {
    await a.replayAll(threadA);
    const other = await serve.client("a");
    await other.attach(threadA);
    await other.replayAll(threadA);
    assert.equal(seen.a.length, 1);
  });

  await t.test("P-ARC-23 disposal revokes at once: the agent's next call reaches no handler", async () => {
    await a.disposeEndpoint("tools-a");
    serve.model.push(call("note_write", { text: "after dispose" }), { text: ["gone"] });
    assert.equal(await turn(a, threadA, "write again"), "completed");
    assert.equal(seen.a.length, 1);
    // The next turn's session no longer offers the tool (P-ARC-28): the agent refuses the model's call itself.
    assert.doesNotMatch(JSON.stringify(serve.model.requests.at(-1)?.tools ?? []), /note_write/);
    assert.doesNotMatch(lastToolOutput(serve.model.requests), /saved/);
  });

  await t.test("P-PRV-11 P-CAP-05 a restart sends nothing to the agent and invokes no handler", async () => {
    const requests = serve.model.requests.length;
    await serve.restart();
    const again = await serve.client("a");
    await again.attach(threadA);
    const events = await again.replayAll(threadA);
    assert.ok(events.length > 0);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(serve.model.requests.length, requests, "no prompt re-sent to the agent");
    assert.equal(seen.a.length, 1);
    assert.equal(seen.b.length, 0);
  });
});
