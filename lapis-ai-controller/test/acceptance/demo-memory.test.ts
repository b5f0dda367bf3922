// The demo's memory through `npm run demo` itself, driven through stdin and
// stdout like a person, on the real local model (llama-server + SmolLM2-135M,
// real Codex): `/remember` a fact, a new thread asks a question that needs
// it and the model answers with it; `/forget` it, and the same question in a
// new thread no longer gets it. No process is left behind.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { processesOf, startDemo, type Demo } from "../support/demo-driver.ts";
import { PACKAGE } from "../support/installed-cli.ts";

const LLAMA_INSTALL = resolve(PACKAGE, "..", "scripts", "llama", "install.sh");
const STARTUP_MS = 900_000;
// Codex's own prompt is ~4,650 tokens: SmolLM2 on one loaded core reads it in minutes.
const TURN_MS = 600_000;
const NAME = "Zorblax";
const QUESTION = "What is my name?";

/** Types a question and answers what the chat printed until the turn's end marker. */
async function ask(demo: Demo, question: string): Promise<string> {
  const from = demo.out().length;
  demo.type(question);
  const end = await demo.waitFor(/\[(completed|failed|cancelled|interrupted)\]/, TURN_MS);
  assert.equal(end[1], "completed", demo.out().slice(-2000));
  return demo.out().slice(from);
}

test("AIC-DEMO-10 npm run demo: /remember, a question that needs the fact, /forget, the same question, on the real local model", { timeout: STARTUP_MS + 3 * TURN_MS }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "aic-demo-memory-"));
  t.after(() => {
    spawnSync("chmod", ["-R", "u+w", dir], { timeout: 30_000 });
    rmSync(dir, { recursive: true, force: true });
  });
  const install = spawnSync("bash", [LLAMA_INSTALL], { encoding: "utf8", timeout: 45 * 60_000, stdio: ["ignore", "pipe", "inherit"] });
  assert.equal(install.status, 0, "scripts/llama/install.sh");
  const demo = startDemo(t, dir);
  await demo.waitFor(/new thread 1 \(/, STARTUP_MS);
  await demo.waitFor(/^> /m, 60_000);

  demo.type(`/remember My name is ${NAME}.`);
  const remembered = await demo.waitFor(/· remembered (\S+)/, 120_000);
  demo.type("/new");
  await demo.waitFor(/new thread 2 \(/, 60_000);
  const withMemory = await ask(demo, QUESTION);
  assert.match(withMemory.slice(withMemory.indexOf("agent:")), new RegExp(NAME, "i"), `the model answered with the remembered name: ${withMemory.slice(-1500)}`);
  assert.match(withMemory, /· memory used: /, "the chat shows the memory the turn used");

  demo.type(`/forget ${remembered[1]}`);
  await demo.waitFor(/· forgot /, 60_000);
  demo.type("/new");
  await demo.waitFor(/new thread 3 \(/, 60_000);
  const withoutMemory = await ask(demo, QUESTION);
  assert.doesNotMatch(withoutMemory, new RegExp(NAME, "i"), `forgotten: ${withoutMemory.slice(-1500)}`);

  demo.type("/quit");
  assert.equal(await demo.exited, 0, demo.err());
  for (let i = 0; i < 50 && processesOf(dir).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(processesOf(dir), [], "no process left behind");
});
