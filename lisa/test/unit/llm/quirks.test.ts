import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, describe, test } from "node:test";
import { createLlmClient } from "../../../src/llm/client.ts";
import { extractTextToolCalls, syntheticCallId } from "../../../src/llm/quirks.ts";
import { stripThinking } from "../../../src/llm/text.ts";
import type { LlmTurn } from "../../../src/llm/types.ts";
import { startScriptedLlm, type ScriptedLlm } from "../../support/scripted-llm.ts";
import { llmConfig, recordingLogger, TOOL_DEFINITIONS } from "./helpers.ts";

const servers: ScriptedLlm[] = [];
const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers) await close();
  for (const server of servers) await server.close();
});

function fixture(name: string): unknown {
  return JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8"));
}

/** Serves one fixture body through the scripted server and returns the client's turn. */
async function turnFor(name: string, toolsOffered = true): Promise<LlmTurn> {
  const server = await startScriptedLlm([{ body: fixture(name) }]);
  servers.push(server);
  const client = createLlmClient({ llm: llmConfig(server.url), log: recordingLogger() });
  closers.push(() => client.close());
  const result = await client.complete({
    messages: [{ role: "user", content: "hi" }],
    tools: toolsOffered ? TOOL_DEFINITIONS : [],
    signal: new AbortController().signal,
  });
  if (!result.ok) throw new Error(`fixture ${name} should parse: ${result.error.code}`);
  return result.value;
}

function calls(turn: LlmTurn): { name: string; arguments: unknown }[] {
  assert.equal(turn.kind, "tool_calls");
  if (turn.kind !== "tool_calls") return [];
  for (const call of turn.calls) {
    assert.equal(typeof call.arguments, "string", "arguments are always sent back as strings");
    assert.ok(call.id.length > 0, "every call has an id");
  }
  assert.equal(new Set(turn.calls.map((c) => c.id)).size, turn.calls.length, "ids are unique within the batch");
  return turn.calls.map((c) => ({ name: c.name, arguments: JSON.parse(c.arguments) }));
}

describe("llama.cpp shapes", () => {
  test("a tool call without id or type gets a synthesized id", async () => {
    const turn = await turnFor("llamacpp-tool-call-no-id.json");
    assert.deepEqual(calls(turn), [{ name: "web_search", arguments: { query: "continuwuity matrix server" } }]);
    assert.equal(turn.kind === "tool_calls" && turn.text, null);
    assert.match(turn.kind === "tool_calls" ? turn.calls[0]?.id ?? "" : "", /^[A-Za-z0-9]{9}$/);
  });

  test("empty-string ids become distinct synthesized ids", async () => {
    const turn = await turnFor("llamacpp-tool-calls-empty-ids.json");
    assert.deepEqual(calls(turn).map((c) => c.name), ["web_search", "fetch_web_page"]);
  });

  test("reasoning_content is never part of the text", async () => {
    const turn = await turnFor("llamacpp-reasoning-content.json");
    assert.equal(turn.kind, "text");
    assert.equal(turn.kind === "text" && turn.text, "{\"markdown\": \"Indeed, X is fine.\", \"source_urls\": []}");
  });

  test("a <think> block in content is stripped", async () => {
    const turn = await turnFor("llamacpp-think-in-content.json");
    assert.equal(turn.kind === "text" && turn.text, "{\"markdown\": \"Indeed, it works.\", \"source_urls\": []}");
  });

  test("reasoning before a lone </think> (template-opened block) is stripped", async () => {
    const turn = await turnFor("llamacpp-think-closer-only.json");
    assert.equal(turn.kind === "text" && turn.text, "Indeed, plain prose answer.");
  });
});

describe("vLLM shapes", () => {
  test("tool calls with vLLM ids and null content are kept as sent", async () => {
    const turn = await turnFor("vllm-tool-calls.json");
    assert.deepEqual(calls(turn), [{ name: "fetch_web_page", arguments: { url: "https://example.org/a" } }]);
    assert.equal(turn.kind === "tool_calls" && turn.calls[0]?.id, "chatcmpl-tool-5c3b2a1f0e9d");
  });

  test("a text reply with an empty tool_calls array and reasoning_content is text without reasoning", async () => {
    const turn = await turnFor("vllm-reasoning-answer.json");
    assert.equal(turn.kind, "text");
    assert.equal(turn.kind === "text" && turn.text.includes("SECRET-REASONING"), false);
    assert.equal(turn.kind === "text" && turn.text, "{\"markdown\": \"Indeed, the answer.\", \"source_urls\": []}");
  });
});

describe("Ollama /v1 shapes", () => {
  test("tool calls with index and empty-string content", async () => {
    const turn = await turnFor("ollama-v1-tool-calls.json");
    assert.deepEqual(calls(turn), [{ name: "web_search", arguments: { query: "continuwuity" } }]);
    assert.equal(turn.kind === "tool_calls" && turn.text, null);
    assert.equal(turn.kind === "tool_calls" && turn.calls[0]?.id, "call_k3x9p2aa");
  });

  test("finish_reason stop with tool calls present is decided by tool_calls; duplicate ids are made unique", async () => {
    const turn = await turnFor("ollama-v1-tool-calls-stop.json");
    assert.deepEqual(calls(turn), [{ name: "web_search", arguments: { query: "a" } }, { name: "web_search", arguments: { query: "b" } }]);
    assert.equal(turn.kind === "tool_calls" && turn.calls[0]?.id, "call_0");
  });

  test("the reasoning field is ignored", async () => {
    const turn = await turnFor("ollama-v1-reasoning.json");
    assert.equal(turn.kind === "text" && turn.text, "{\"markdown\": \"Indeed.\", \"source_urls\": []}");
  });
});

describe("other servers and templates", () => {
  test("object arguments are accepted and become a JSON string; finish_reason tool counts as tool calls", async () => {
    const turn = await turnFor("object-arguments-finish-tool.json");
    assert.deepEqual(calls(turn), [{ name: "web_search", arguments: { query: "matrix", result_count: 3 } }]);
  });

  test("Hermes/Qwen <tool_call> tags in content become tool calls, with the prose kept as text", async () => {
    const turn = await turnFor("hermes-tool-call-in-content.json");
    assert.deepEqual(calls(turn), [
      { name: "web_search", arguments: { query: "continuwuity" } },
      { name: "fetch_web_page", arguments: { url: "https://example.org/a" } },
    ]);
    assert.equal(turn.kind === "tool_calls" && turn.text, "Let me look that up.");
  });

  test("a bare JSON tool call in content (Llama 3.1 \"parameters\") becomes a tool call", async () => {
    assert.deepEqual(calls(await turnFor("bare-json-tool-call-in-content.json")), [{ name: "web_search", arguments: { query: "continuwuity" } }]);
  });

  test("Mistral [TOOL_CALLS] in content becomes tool calls", async () => {
    assert.deepEqual(calls(await turnFor("mistral-tool-calls-in-content.json")), [{ name: "web_search", arguments: { query: "x" } }]);
  });

  test("text tool calls are not read when no tools were offered", async () => {
    const turn = await turnFor("bare-json-tool-call-in-content.json", false);
    assert.equal(turn.kind, "text");
  });

  test("finish_reason length marks the turn truncated", async () => {
    const turn = await turnFor("finish-length-truncated.json");
    assert.equal(turn.kind, "text");
    assert.equal(turn.truncated, true);
  });

  test("a legacy function_call becomes one tool call", async () => {
    assert.deepEqual(calls(await turnFor("legacy-function-call.json")), [{ name: "web_search", arguments: { query: "x" } }]);
  });

  test("content given as typed parts is joined", async () => {
    const turn = await turnFor("content-parts.json");
    assert.equal(turn.kind === "text" && turn.text, "{\"markdown\": \"Indeed, parts.\", \"source_urls\": []}");
  });
});

describe("quirk helpers", () => {
  const thinkCases: [string, string, string][] = [
    ["closed block", "<think>x</think>answer", "answer"],
    ["several blocks and case", "<THINK>a</THINK>one <thinking>b</thinking>two", "one two"],
    ["unterminated block (truncated)", "answer first <think>never closed", "answer first"],
    ["only reasoning", "<think>all hidden", ""],
    ["stray closer", "hidden reasoning</think>shown", "shown"],
    ["no reasoning", "  plain  ", "plain"],
  ];
  for (const [name, input, expected] of thinkCases) {
    test(`stripThinking: ${name}`, () => assert.equal(stripThinking(input), expected));
  }

  test("a JSON final answer is not mistaken for a text tool call", () => {
    assert.equal(extractTextToolCalls("{\"markdown\": \"hi\", \"source_urls\": []}"), null);
    assert.equal(extractTextToolCalls("Just prose."), null);
  });

  test("a broken tagged call keeps its name so the session can report invalid arguments", () => {
    const found = extractTextToolCalls("<tool_call>{\"name\": \"web_search\", \"arguments\": {\"query\": \"x\"");
    assert.equal(found?.calls[0]?.name, "web_search");
  });

  test("synthesized ids are 9 alphanumerics", () => {
    assert.match(syntheticCallId(), /^[A-Za-z0-9]{9}$/);
  });
});
