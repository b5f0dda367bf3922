// The terminal chat's thread commands (docs/examples/terminal-chat/threads.mjs,
// the plain JavaScript the chat runs) against `serve` with the scripted ACP
// agent, through the SDK: `/threads` lists the application's threads from
// threads.list, `/delete N` erases one (a running turn cancelled first),
// `/usage` prints the reported tokens of the thread and the application.
import assert from "node:assert/strict";
import { test } from "node:test";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { engineServe, waitTurn } from "../support/engine-serve.ts";
import { tempDir } from "../support/temp.ts";

type ChatThreads = {
  readonly listed: readonly string[];
  list(currentId: string | null, known?: readonly string[]): Promise<string[]>;
  remove(n: string | undefined): Promise<string | null>;
  usage(threadId: string | null): Promise<void>;
};
const { chatThreads } = (await import(new URL("../../docs/examples/terminal-chat/threads.mjs", import.meta.url).href)) as { chatThreads: (client: unknown, say: (line: string) => void) => ChatThreads };

test("P-LIF-14 the chat's /threads, /delete N and /usage over threads.list, threads.delete and usage.get", { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t, "aic-chat-threads-");
  const agent = scriptedAgent({ steps: [{ say: "noted" }], usage: { inputTokens: 900, cachedReadTokens: 300, outputTokens: 40, thoughtTokens: 4, totalTokens: 1240 } }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 1);
  await serve.start();
  const c = await serve.client("alice");
  t.after(() => c.close());
  const lines: string[] = [];
  const chat = chatThreads(c, (line) => lines.push(line));
  const said = () => lines.splice(0);

  const first = String((await c.threads.create({ workspace: "ws-1", provider: "scripted" })).threadId);
  await c.turns.wait((await c.turns.submit(first, { text: "Plan the garden layout" })).turnId, { timeoutMs: 60_000 });
  const second = String((await c.threads.create({ workspace: "ws-1", provider: "scripted", config: { approvalPolicy: "ask", title: "Groceries" } })).threadId);

  assert.deepEqual(await chat.list(first), [second, first]);
  const shown = said();
  assert.equal(shown.length, 2);
  assert.match(shown[0] as string, new RegExp(`^  1  ${second}  Groceries  · last active just now, 0 turns$`));
  assert.match(shown[1] as string, new RegExp(`^\\* 2  ${first}  "Plan the garden layout"  · last active (just now|\\d+ s ago), 1 turn  \\(current\\)$`));

  await chat.usage(first);
  assert.deepEqual(said(), [
    "this thread: 1,240 tokens (1,200 in, 300 of them cached; 40 out, 4 of them reasoning) over 1 turn",
    "this application: 1,240 tokens (1,200 in, 300 of them cached; 40 out, 4 of them reasoning) over 1 turn",
  ]);

  // The chat's own numbering first (its state's order), then any other thread of the application.
  assert.deepEqual(await chat.list(null, [first]), [first, second]);
  said();
  assert.equal(await chat.remove("1"), first);
  assert.deepEqual(said(), [`deleted thread 1 (${first}); the agent's own files: unsupported`]);
  await assert.rejects(c.threads.snapshot(first), (e: { code?: string }) => e.code === "not_found");
  assert.equal(await chat.remove("9"), null);
  assert.deepEqual(said(), ["no such thread; see /threads"]);
  assert.deepEqual(await chat.list(null), [second]);
  said();
  await chat.usage(null);
  assert.deepEqual(said(), ["this application: no usage reported"]);
  await waitTurn(c, String((await c.turns.submit(second, { text: "milk" })).turnId), ["completed"]);
});
