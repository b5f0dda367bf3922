// Streamed responses recorded from the real llama.cpp llama-server with
// SmolLM2-135M (test/support/llama/record-stream.ts), replayed chunk by chunk
// as they arrived: each streamed answer becomes the same turn as the same
// request answered without streaming (recorded beside it), the content grows
// by prefixes, a JSON-contract answer streams its `markdown` as it grows, the
// usage chunk is ignored, and a refusal before the stream is classified as
// today. A tool call streamed in pieces: this build never emits
// `delta.tool_calls` for SmolLM2 (see record-stream.ts), so the recording is
// the call as `<tool_call>` text under tool-call.gbnf; the client, having
// offered tools, assembles it into the call and no piece of it is ever shown.
// Structured `delta.tool_calls` shapes are covered by stream.test.ts.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { after, describe, test } from "node:test";
import { createLlmClient } from "../../../src/llm/client.ts";
import { partialMarkdown } from "../../../src/llm/partial-answer.ts";
import { completionToTurn } from "../../../src/llm/quirks.ts";
import { parseCompletion } from "../../../src/llm/schemas.ts";
import { startScriptedLlm, type ScriptedLlm } from "../../support/scripted-llm.ts";
import type { ToolDefinition } from "../../../src/tools/port.ts";
import { llmConfig, recordingLogger, TOOL_DEFINITIONS } from "./helpers.ts";

interface Fixture {
  readonly server: string;
  readonly stream: { readonly status: number; readonly content_type: string; readonly chunks: readonly string[] };
  readonly single: { readonly status: number; readonly body: string };
}

const DIR = new URL("./fixtures/llama-server-stream/", import.meta.url);
const fixture = (name: string): Fixture => JSON.parse(readFileSync(new URL(`${name}.json`, DIR), "utf8")) as Fixture;
const NAMES = readdirSync(DIR).map((file) => file.replace(/\.json$/, ""));

const servers: ScriptedLlm[] = [];
after(async () => {
  for (const server of servers) await server.close();
});

async function replay(recorded: Fixture, tools: readonly ToolDefinition[] = []) {
  const server = await startScriptedLlm(() => (recorded.stream.content_type.includes("event-stream")
    ? { status: recorded.stream.status, headers: { "content-type": recorded.stream.content_type }, stream: recorded.stream.chunks.map((text) => ({ text, delayMs: 1 })) }
    : { status: recorded.stream.status, headers: { "content-type": recorded.stream.content_type }, rawBody: recorded.stream.chunks.join("") }));
  servers.push(server);
  const client = createLlmClient({ llm: llmConfig(server.url), log: recordingLogger(), retry: { baseDelayMs: 1, maxDelayMs: 5 } });
  const seen: string[] = [];
  try {
    const result = await client.complete({ messages: [{ role: "user", content: "hi" }], tools, signal: new AbortController().signal, onContent: (c) => seen.push(c) });
    return { result, seen, attempts: server.requests.length };
  } finally {
    await client.close();
  }
}

describe("LISA-STREAM-02: streams recorded from the real llama-server", () => {
  const streamed = NAMES.filter((name) => fixture(name).stream.status === 200);

  test("every recorded stream becomes the turn its non-streaming twin is, its content growing by prefixes", async () => {
    assert.ok(streamed.includes("plain-answer") && streamed.includes("finish-length") && streamed.includes("answer-contract"), streamed.join(","));
    for (const name of streamed) {
      const recorded = fixture(name);
      assert.match(recorded.stream.content_type, /text\/event-stream/, name);
      const { result, seen, attempts } = await replay(recorded);
      assert.ok(result.ok, `${name}: ${result.ok ? "" : result.error.code}`);
      assert.equal(attempts, 1, name);
      const single = parseCompletion(JSON.parse(recorded.single.body));
      assert.ok(single !== null, name);
      assert.deepEqual(result.value, completionToTurn(single, false), name);
      assert.ok(seen.length >= 2, `${name}: ${seen.length} content steps`);
      assert.ok(seen.every((content, i) => i === 0 || content.startsWith(seen[i - 1] ?? "")), name);
    }
  });

  test("a JSON-contract answer (answer.gbnf) shows its markdown growing, never the JSON around it", async () => {
    const { result, seen } = await replay(fixture("answer-contract"));
    assert.ok(result.ok && result.value.kind === "text");
    const final = JSON.parse(result.value.kind === "text" ? result.value.text : "{}") as { markdown: string };
    const partials = seen.map((content) => partialMarkdown(content)).filter((m): m is string => m !== null);
    assert.ok(partials.length >= 2, String(partials.length));
    for (const partial of partials) assert.ok(final.markdown.startsWith(partial), partial);
    assert.equal(partials.at(-1), final.markdown);
    assert.ok(partials.every((p) => !p.includes("source_urls") && !p.includes("{")));
  });

  test("a tool call streamed in pieces (<tool_call> text) becomes the same call as its non-streaming twin, and never shows", async () => {
    const recorded = fixture("tool-call-text");
    assert.match(recorded.server, /tool-call\.gbnf/);
    const { result, seen } = await replay(recorded, TOOL_DEFINITIONS);
    assert.ok(result.ok, result.ok ? "" : result.error.code);
    const single = parseCompletion(JSON.parse(recorded.single.body));
    assert.ok(single !== null);
    const twin = completionToTurn(single, true);
    assert.ok(result.value.kind === "tool_calls" && twin.kind === "tool_calls");
    // Ids of calls found in text are generated per turn; everything else is the same.
    const withoutIds = (calls: readonly { id: string }[]) => calls.map((call) => ({ ...call, id: "" }));
    assert.deepEqual({ ...result.value, calls: withoutIds(result.value.calls) }, { ...twin, calls: withoutIds(twin.calls) });
    assert.equal(result.value.calls.length, 1);
    assert.equal(result.value.calls[0]?.name, "web_search");
    assert.equal(typeof (JSON.parse(result.value.calls[0]?.arguments ?? "{}") as { query?: unknown }).query, "string");
    // The call arrived in many pieces, and no partial of it was ever answer text.
    assert.ok(seen.length >= 10, String(seen.length));
    assert.ok(seen.every((content) => partialMarkdown(content) === null), "a partial tool call is never shown");
  });

  test("the context-window refusal before any event is llm_context_exceeded, not retried, never taken for a refusal to stream", async () => {
    const { result, attempts } = await replay(fixture("context-overflow"));
    assert.equal(!result.ok && result.error.code, "llm_context_exceeded");
    assert.equal(attempts, 1);
  });
});
