// LISA-STREAM-17: with `streaming.prose`, an answer in plain prose (outside the
// JSON contract) is reported as it grows, and the final answer is the same one
// the final check gives without streaming; prose is never reported once a web
// result was used (the final check would refuse it), nor when not configured.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { AnswerProgress } from "../../../src/llm/types.ts";
import { streamedAnswer, streamedText, streamedToolCalls } from "../../support/scripted-stream.ts";
import { runAnswerer } from "./harness.ts";
import { fakeToolSession, okResult } from "./helpers.ts";

const PROSE = "Continuwuity is a Matrix homeserver written in Rust, a community fork that keeps the project going.";

function recorder(): { progress: (p: AnswerProgress) => void; texts: string[]; tools: string[] } {
  const texts: string[] = [];
  const tools: string[] = [];
  return { texts, tools, progress: (p) => (p.kind === "text" ? texts.push(p.markdown) : tools.push(p.name)) };
}

describe("LISA-STREAM-17: prose answers stream when configured", () => {
  test("a prose answer grows by prefixes and ends as the same validated answer", async () => {
    const seen = recorder();
    const run = await runAnswerer(() => streamedText(PROSE, { pieceChars: 6 }), { streamProse: true, request: { progress: seen.progress } });
    assert.ok(run.result.ok);
    assert.equal(run.result.value.markdown, PROSE);
    assert.ok(seen.texts.length >= 10, String(seen.texts.length));
    assert.ok(seen.texts.every((text, i) => PROSE.startsWith(text) && (i === 0 || text.startsWith(seen.texts[i - 1] ?? ""))));
    assert.equal(seen.texts.at(-1), PROSE);
  });

  test("not configured: prose waits for the final answer (the contract's markdown still streams)", async () => {
    const prose = recorder();
    const run = await runAnswerer(() => streamedText(PROSE, { pieceChars: 6 }), { request: { progress: prose.progress } });
    assert.ok(run.result.ok && run.result.value.markdown === PROSE);
    assert.deepEqual(prose.texts, []);
    const contract = recorder();
    await runAnswerer(() => streamedAnswer(PROSE, [], { pieceChars: 6 }), { request: { progress: contract.progress } });
    assert.ok(contract.texts.length >= 10 && contract.texts.at(-1) === PROSE);
  });

  test("after a web result, prose is never shown (the final check asks for the contract) and the answer comes from the repair", async () => {
    const seen = recorder();
    const session = fakeToolSession({ web_search: () => ({ result: okResult("Results."), registers: ["https://continuwuity.org/"] }) });
    const script = (_request: unknown, index: number) => [
      streamedToolCalls([{ name: "web_search", arguments: { query: "continuwuity" } }]),
      streamedText(PROSE, { pieceChars: 6 }),
      streamedAnswer("From the repair.", ["https://continuwuity.org/"]),
    ][index] ?? streamedAnswer("extra");
    const run = await runAnswerer(script, { session, streamProse: true, request: { progress: seen.progress } });
    assert.ok(run.result.ok, run.result.ok ? "" : run.result.error.code);
    assert.equal(run.result.value.markdown, "From the repair.");
    assert.deepEqual(seen.tools, ["web_search"]);
    assert.ok(seen.texts.every((text) => "From the repair.".startsWith(text)), JSON.stringify(seen.texts));
  });
});
