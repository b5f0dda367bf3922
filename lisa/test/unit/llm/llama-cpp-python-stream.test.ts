// llama-cpp-python's streaming, scripted from its source (fixtures in
// fixtures/llama-cpp-python-stream; it is not installable here without
// compiling llama.cpp, so nothing was recorded): a role-only first delta,
// `logprobs: null`, an empty last delta with the finish reason, sse-starlette's
// `: ping` comments, LF or (older versions) CRLF; a forced tool call whose
// every piece repeats index, id, type and name and carries its argument text
// twice (`function_call` and `tool_calls`); and `interrupt_requests`, which
// ends a stream with `[DONE]` and no finish reason when another request waits:
// that request is asked again once without streaming, never taken as whole.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, describe, test } from "node:test";
import { createLlmClient } from "../../../src/llm/client.ts";
import { completionToTurn } from "../../../src/llm/quirks.ts";
import { parseCompletion } from "../../../src/llm/schemas.ts";
import type { ToolDefinition } from "../../../src/tools/port.ts";
import { startScriptedLlm, type ScriptedLlm } from "../../support/scripted-llm.ts";
import { llmConfig, recordingLogger, TOOL_DEFINITIONS } from "./helpers.ts";

interface Fixture {
  readonly source: string;
  readonly stream: { readonly status: number; readonly content_type: string; readonly chunks: readonly string[] };
  readonly single: { readonly status: number; readonly content_type: string; readonly body: string };
}

const fixture = (name: string): Fixture =>
  JSON.parse(readFileSync(new URL(`./fixtures/llama-cpp-python-stream/${name}.json`, import.meta.url), "utf8")) as Fixture;

const servers: ScriptedLlm[] = [];
after(async () => {
  for (const server of servers) await server.close();
});

// Streams while asked to stream; answers the single body otherwise (as the server does for `stream: false`).
async function replay(recorded: Fixture, tools: readonly ToolDefinition[] = []) {
  const server = await startScriptedLlm((request) => ((request.body as { stream?: boolean }).stream === true
    ? { status: recorded.stream.status, headers: { "content-type": recorded.stream.content_type }, stream: recorded.stream.chunks.map((text) => ({ text, delayMs: 1 })) }
    : { status: recorded.single.status, headers: { "content-type": recorded.single.content_type }, rawBody: recorded.single.body }));
  servers.push(server);
  const log = recordingLogger();
  const client = createLlmClient({ llm: llmConfig(server.url), log, retry: { baseDelayMs: 1, maxDelayMs: 5 } });
  const seen: string[] = [];
  try {
    const result = await client.complete({ messages: [{ role: "user", content: "hi" }], tools, signal: new AbortController().signal, onContent: (c) => seen.push(c) });
    return { result, seen, streamFlags: server.requests.map((r) => (r.body as { stream?: boolean }).stream === true), log };
  } finally {
    await client.close();
  }
}

const twin = (recorded: Fixture, tools: boolean) => {
  const single = parseCompletion(JSON.parse(recorded.single.body));
  assert.ok(single !== null);
  return completionToTurn(single, tools);
};

describe("LISA-STREAM-18: llama-cpp-python's streaming shapes (scripted from its source)", () => {
  test("a text answer, LF or CRLF, with ping comments, becomes the turn its non-streaming twin is", async () => {
    for (const name of ["plain-answer", "plain-answer-crlf"]) {
      const recorded = fixture(name);
      assert.match(recorded.source, /llama_chat_format\.py/);
      const { result, seen, streamFlags } = await replay(recorded);
      assert.ok(result.ok, name);
      assert.deepEqual(result.value, twin(recorded, false), name);
      assert.deepEqual(streamFlags, [true], name);
      assert.equal(seen.at(-1), "The sky is blue because air scatters blue light.", name);
      assert.ok(seen.every((c, i) => i === 0 || c.startsWith(seen[i - 1] ?? "")), name);
    }
  });

  test("a forced tool call repeating id and name in every piece, its arguments also as function_call, becomes one call", async () => {
    const recorded = fixture("forced-tool-call");
    const { result } = await replay(recorded, TOOL_DEFINITIONS);
    assert.ok(result.ok && result.value.kind === "tool_calls");
    assert.deepEqual(result.value, twin(recorded, true));
    assert.equal(result.value.calls.length, 1);
    assert.deepEqual(JSON.parse(result.value.calls[0]?.arguments ?? "{}"), { query: "weather in Paris" });
  });

  test("a stream cut by interrupt_requests ([DONE], no finish reason) is asked again once as one message, never taken as whole", async () => {
    const recorded = fixture("interrupted");
    const { result, seen, streamFlags, log } = await replay(recorded);
    assert.ok(result.ok);
    assert.deepEqual(result.value, twin(recorded, false), "the whole answer, from the single message");
    assert.deepEqual(streamFlags, [true, false]);
    assert.equal(seen.at(-1), "The sky is blue", "the partial text stayed partial");
    assert.equal(log.lines.filter((l) => l.event === "llm_stream_interrupted").length, 1);
  });
});
