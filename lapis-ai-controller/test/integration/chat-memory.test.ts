// The terminal chat's memory (docs/examples/terminal-chat/memory.mjs, the
// module the chat runs) against the real `serve` with the scripted ACP agent:
// `/remember` in one thread, a NEW thread recalls it (the text in the agent's
// input, tagged with its id, and the rendered id reported by turns.get), and
// after `/forget` a newer thread recalls nothing.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { chatMemory } from "../support/chat-memory-module.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { engineServe, waitTurn } from "../support/engine-serve.ts";
import { tempDir } from "../support/temp.ts";

test("AIC-DEMO-06 P-MEM-02 the chat's /remember reaches a NEW thread's agent input with its id shown; /memory lists it; after /forget a newer thread recalls nothing", async (t) => {
  const dir = tempDir(t, "aic-chatmem-");
  const agent = scriptedAgent({ steps: [{ say: "ok", messageId: "m1" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 1, { contextDeadlineMs: 3_000 });
  await serve.start();
  const c = await serve.client();
  t.after(() => c.close());
  const lines: string[] = [];
  const memory = chatMemory(join(dir, "chat-memory"), (l) => lines.push(l));
  const prompts = () => agent.log().filter((e) => e.event === "prompt").map((e) => String(e.text));
  const newThread = async () => {
    const threadId = String((await c.createThread({ workspace: "ws-1", provider: "scripted", config: { approvalPolicy: "allow-all" } })).threadId);
    await memory.attach(c, threadId);
    return threadId;
  };
  const run = async (threadId: string, text: string) => {
    const turnId = String((await c.submitTurn(threadId, { text })).turnId);
    assert.equal((await waitTurn(c, turnId, ["completed", "failed"], 20_000)).state, "completed");
    const view = await c.turns.get(turnId);
    return { view, prompt: prompts().find((p) => p.includes(text)) ?? "", used: memory.usedLine(view) };
  };

  const first = await newThread();
  await memory.remember("The staging database moved to host bravo-7.", first);
  const ref = /remembered (user:\S+)/.exec(lines.at(-1) ?? "")?.[1];
  assert.ok(ref !== undefined, lines.join("\n"));
  await memory.list();
  assert.match(lines.at(-1) ?? "", new RegExp(`^  ${ref}  The staging database moved to host bravo-7\\.  \\(updated `));

  const second = await newThread();
  assert.notEqual(second, first);
  const recalled = await run(second, "Where is the staging database now?");
  assert.match(recalled.prompt, new RegExp(`<recalled-memory id="${ref}" origin="recall" [^>]*>\\nThe staging database moved to host bravo-7\\.\\n</recalled-memory>`));
  assert.ok(recalled.prompt.indexOf("bravo-7") < recalled.prompt.indexOf("Where is the staging database now?"), "ahead of the prompt");
  assert.deepEqual(recalled.view.memory?.rendered, [{ memoryId: ref, origin: "recall", truncated: false }]);
  assert.equal(recalled.used, `· memory used: ${ref}`);

  await memory.forget(ref.slice("user/".length));
  assert.equal(lines.at(-1), `· forgot ${ref}`);
  await memory.remember("The staging database moved to host bravo-7.", second);
  assert.equal(lines.at(-1), "· not remembered (memory_excluded)", "a forgotten text does not come back on re-ingest");
  const third = await newThread();
  const after = await run(third, "Where is the staging database, again?");
  assert.ok(!after.prompt.includes("bravo-7") && !after.prompt.includes("recalled-memory"), after.prompt);
  assert.deepEqual(after.view.memory?.rendered, []);
  assert.equal(after.used, null);
});
