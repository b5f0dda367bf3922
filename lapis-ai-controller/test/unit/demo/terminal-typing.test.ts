// Typing while the agent's answer streams: on a real terminal-mode readline
// (over in-memory streams), keys typed during the answer are not echoed
// into it; once the answer ends the prompt shows again with what was typed.
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { createInterface, type Interface } from "node:readline";
import { test } from "node:test";

type Present = { typingHold(rl: Interface): { readonly held: boolean; hold(): void; release(): void } };
const PRESENT = new URL("../../../docs/examples/terminal-chat/present.mjs", import.meta.url).href;
const { typingHold } = (await import(PRESENT)) as Present;

const tick = () => new Promise((r) => setImmediate(r));

test("AIC-DEMO-11 typed text never lands inside the streaming answer; it shows again on the prompt when the answer ends", async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  let screen = "";
  output.on("data", (c: Buffer) => { screen += c.toString("utf8"); });
  const rl = createInterface({ input, output, terminal: true });
  rl.setPrompt("> ");
  const typing = typingHold(rl);
  const lines: string[] = [];
  rl.on("line", (l) => lines.push(l));
  // The answer streams; the person types meanwhile.
  typing.hold();
  output.write("agent: The sea is ");
  input.write("hello");
  await tick();
  output.write("wide and deep.\n");
  await tick();
  assert.equal(screen, "agent: The sea is wide and deep.\n", "nothing typed shows inside the answer");
  assert.equal(rl.line, "hello", "the keys were kept");
  // The answer ends: the prompt comes back with the typed text, and Enter sends it.
  typing.release();
  await tick();
  assert.match(screen.slice("agent: The sea is wide and deep.\n".length), /> hello/);
  input.write(" there\r");
  await tick();
  assert.deepEqual(lines, ["hello there"]);
  // Not held: keys echo as usual.
  assert.equal(typing.held, false);
  rl.close();
});
