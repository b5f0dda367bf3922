// The terminal chat's memory through the real codex-acp + Codex against the
// scripted Responses-API model: what `/remember` kept in one thread is in the
// MODEL's input of a NEW thread's turn (rendered by the controller, tagged
// with its id), and absent from a newer thread's input after `/forget`.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { startAgentServe } from "../support/agent-serve.ts";
import { chatMemory } from "../support/chat-memory-module.ts";
import { waitTurn } from "../support/engine-serve.ts";

const FACT = "The staging database moved to host bravo-7.";

test("AIC-DEMO-06 P-MEM-02 real agent: a remembered fact reaches the model's input in a NEW thread; after /forget it does not", { timeout: 240_000 }, async (t) => {
  const serve = await startAgentServe(t, []);
  const c = await serve.client("a");
  t.after(() => c.close());
  const lines: string[] = [];
  const memory = chatMemory(join(serve.dir, "chat-memory"), (l) => lines.push(l));
  const newThread = async () => {
    const threadId = String((await c.createThread({ workspace: "ws", provider: "codex" })).threadId);
    await memory.attach(c, threadId);
    return threadId;
  };
  const run = async (threadId: string, text: string) => {
    serve.model.push({ text: ["noted"] });
    const before = serve.model.requests.length;
    const turnId = String((await c.submitTurn(threadId, { text })).turnId);
    assert.equal((await waitTurn(c, turnId, ["completed", "failed"], 120_000)).state, "completed");
    const inputs = serve.model.requests.slice(before).map((r) => JSON.stringify(r.input ?? null));
    assert.ok(inputs.some((i) => i.includes(text)), "the turn reached the model");
    return { inputs: inputs.join("\n"), view: await c.turns.get(turnId) };
  };

  const first = await newThread();
  await memory.remember(FACT, first);
  const ref = /remembered (user:\S+)/.exec(lines.at(-1) ?? "")?.[1];
  assert.ok(ref !== undefined, lines.join("\n"));

  const recalled = await run(await newThread(), "Where is the staging database now?");
  assert.ok(recalled.inputs.includes("bravo-7"), "the remembered text is in the model's input of the new thread");
  assert.ok(recalled.inputs.includes(`recalled-memory id=\\"${ref}\\"`), "tagged with its id");
  assert.deepEqual(recalled.view.memory?.rendered.map((m) => m.memoryId), [ref]);
  assert.equal(memory.usedLine(recalled.view), `· memory used: ${ref}`);

  await memory.forget(ref);
  assert.equal(lines.at(-1), `· forgot ${ref}`);
  const after = await run(await newThread(), "Where is the staging database, again?");
  assert.ok(!after.inputs.includes("bravo-7"), "absent after /forget");
  assert.deepEqual(after.view.memory?.rendered, []);
});
