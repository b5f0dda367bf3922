// The streaming model side: the SSE decoder, the chunk accumulator, and the
// client streaming from a scripted OpenAI-compatible server (text, tool calls
// in pieces, CRLF and keep-alive comments, a server that cannot stream, and
// every bound: idle deadline, size cap, invocation deadline, cut streams).
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { createLlmClient } from "../../../src/llm/client.ts";
import { SseDecoder } from "../../../src/llm/sse.ts";
import { ChunkAccumulator } from "../../../src/llm/stream-chunks.ts";
import type { CompleteRequest } from "../../../src/llm/types.ts";
import { errorReply, startScriptedLlm, textReply, type Script, type ScriptedLlm } from "../../support/scripted-llm.ts";
import { sseEvents, streamedText, streamedToolCalls } from "../../support/scripted-stream.ts";
import { llmConfig, recordingLogger, TOOL_DEFINITIONS } from "./helpers.ts";

const FAST_RETRY = { baseDelayMs: 1, maxDelayMs: 5, maxAttempts: 2 };
const servers: ScriptedLlm[] = [];
after(async () => {
  for (const server of servers) await server.close();
});

async function run(script: Script, options: { idleMs?: number; deadlineMs?: number; tools?: boolean; maxOutputTokens?: number } = {}) {
  const server = await startScriptedLlm(script);
  servers.push(server);
  const log = recordingLogger();
  const client = createLlmClient({
    llm: llmConfig(server.url, { max_output_tokens: options.maxOutputTokens ?? 700 }), log, retry: FAST_RETRY, streamIdleMs: options.idleMs ?? 2_000,
  });
  const seen: string[] = [];
  const request: CompleteRequest = {
    messages: [{ role: "user", content: "hi" }], tools: options.tools === true ? TOOL_DEFINITIONS : [], signal: new AbortController().signal,
    onContent: (content) => seen.push(content),
    ...(options.deadlineMs === undefined ? {} : { deadline: performance.now() + options.deadlineMs }),
  };
  try {
    const result = await client.complete(request);
    const again = await client.complete({ ...request, onContent: (content) => seen.push(content) }).catch(() => null);
    return { result, seen, server, log, again };
  } finally {
    await client.close();
  }
}

describe("LISA-STREAM-01: SSE decoder", () => {
  test("events split anywhere, LF or CRLF, comments skipped, multi-line data joined", () => {
    const sse = new SseDecoder(1_000);
    const text = ": ping - 2025-01-01\r\n\r\ndata: {\"a\":1}\r\n\r\ndata: one\ndata: two\n\nevent: x\ndata: [DONE]\n\n";
    const out: string[] = [];
    for (const char of text) {
      const step = sse.push(char);
      assert.ok(step.ok);
      out.push(...step.data);
    }
    assert.deepEqual(out, ["{\"a\":1}", "one\ntwo", "[DONE]"]);
  });

  test("an event that never ends is refused beyond the cap; end() flushes an unterminated last event", () => {
    assert.equal(new SseDecoder(10).push(`data: ${"x".repeat(20)}`).ok, false);
    const sse = new SseDecoder(100);
    assert.deepEqual(sse.push("data: last").ok, true);
    assert.deepEqual(sse.end(), ["last"]);
  });
});

describe("LISA-STREAM-01: chunk accumulator", () => {
  test("tool calls in pieces by index, without index (a new id starts a call), object arguments, repeated names", () => {
    const acc = new ChunkAccumulator();
    const delta = (d: unknown, finish: string | null = null) => ({ choices: [{ index: 0, delta: d, finish_reason: finish }] });
    for (const c of [
      delta({ role: "assistant", content: null }),
      delta({ tool_calls: [{ index: 0, id: "a1", function: { name: "web_search", arguments: "{\"qu" } }] }),
      delta({ tool_calls: [{ index: 0, function: { name: "web_search", arguments: "ery\":\"x\"}" } }] }),
      delta({ tool_calls: [{ id: "b2", function: { name: "fetch_web_page", arguments: { url: "https://e.org/" } } }] }),
      delta({}, "tool_calls"),
      { choices: [], usage: { total_tokens: 3 } },
    ]) assert.equal(acc.apply(c), "ok");
    assert.ok(acc.finished);
    const message = (acc.completion() as { choices: { message: { tool_calls: unknown[] } }[] }).choices[0]?.message;
    assert.deepEqual(message?.tool_calls, [
      { id: "a1", type: "function", function: { name: "web_search", arguments: "{\"query\":\"x\"}" } },
      { id: "b2", type: "function", function: { name: "fetch_web_page", arguments: { url: "https://e.org/" } } },
    ]);
  });

  test("an error chunk ends the stream; a non-object is invalid", () => {
    assert.equal(new ChunkAccumulator().apply({ error: { code: 500, message: "boom" } }), "error");
    assert.equal(new ChunkAccumulator().apply("text"), "invalid");
  });
});

describe("LISA-STREAM-01, LISA-STREAM-03, LISA-STREAM-04: streaming client", () => {
  test("text streams: the content so far is reported as it grows; the turn is the whole text", async () => {
    const { result, seen, server } = await run([streamedText("Hello there, streaming world.", { delayMs: 5 })]);
    assert.ok(result.ok && result.value.kind === "text");
    assert.equal(result.value.kind === "text" && result.value.text, "Hello there, streaming world.");
    assert.ok(seen.length >= 5, String(seen.length));
    assert.ok(seen.every((content, i) => i === 0 || content.startsWith(seen[i - 1] ?? "")));
    assert.equal((server.requests[0]?.body as { stream?: boolean }).stream, true);
  });

  test("tool calls arriving in pieces become one tool_calls turn with whole arguments", async () => {
    const { result } = await run([streamedToolCalls([{ name: "web_search", arguments: { query: "rust streams" } }], { pieceChars: 3 })], { tools: true });
    assert.ok(result.ok && result.value.kind === "tool_calls");
    assert.deepEqual(result.value.kind === "tool_calls" && result.value.calls.map((c) => [c.name, c.arguments]), [["web_search", "{\"query\":\"rust streams\"}"]]);
  });

  test("CRLF events with keep-alive comments (llama-cpp-python) stream like LF ones", async () => {
    const base = streamedText("Fine, thanks.", { crlf: true });
    const stream = [{ text: ": ping - 2025-01-01 00:00:00.000000\r\n\r\n" }, ...(base.stream ?? [])];
    const { result } = await run([{ stream }]);
    assert.equal(result.ok && result.value.kind === "text" && result.value.text, "Fine, thanks.");
  });

  test("a server that ignores `stream` answers in one message: the turn as today, no partial content", async () => {
    const { result, seen } = await run([textReply("Plain."), textReply("Plain.")]);
    assert.equal(result.ok && result.value.kind === "text" && result.value.text, "Plain.");
    assert.deepEqual(seen, []);
  });

  test("a server that refuses `stream` is asked again without it, and not asked to stream again", async () => {
    const { result, server, log, again } = await run([errorReply(400, {}, "stream is not supported"), textReply("Once."), textReply("Twice.")]);
    assert.equal(result.ok && result.value.kind === "text" && result.value.text, "Once.");
    assert.equal(again?.ok && again.value.kind === "text" && again.value.text, "Twice.");
    assert.deepEqual(server.requests.map((r) => (r.body as { stream?: boolean }).stream === true), [true, false, false]);
    assert.ok(log.lines.some((l) => l.event === "llm_stream_refused"));
  });

  test("a stalled stream is a timeout (idle deadline between chunks), retried, then llm_unavailable", async () => {
    const stalled = { stream: streamedText("Half an ans", {}).stream?.slice(0, 2) ?? [], hold: true };
    const { result, server } = await run([stalled, stalled, stalled], { idleMs: 150 });
    assert.equal(!result.ok && result.error.code, "llm_unavailable");
    assert.equal(server.requests.length >= 2, true);
  });

  test("a stream cut before [DONE] or a finish reason is retried", async () => {
    const cut = { stream: sseEvents([{ choices: [{ index: 0, delta: { content: "Half" }, finish_reason: null }] }], { noDone: true }) };
    const { result, seen } = await run([cut, streamedText("Whole.")]);
    assert.equal(result.ok && result.value.kind === "text" && result.value.text, "Whole.");
    assert.equal(seen[0], "Half");
  });

  test("an error event mid-stream (llama-server) is retried", async () => {
    const broken = { stream: sseEvents([{ choices: [{ index: 0, delta: { content: "x" }, finish_reason: null }] }, { error: { code: 500, message: "slot failed" } }]) };
    const { result } = await run([broken, streamedText("Recovered.")]);
    assert.equal(result.ok && result.value.kind === "text" && result.value.text, "Recovered.");
  });

  test("a stream larger than the response cap is llm_response_too_large, not retried", async () => {
    const huge = streamedText("y".repeat(400_000), { pieceChars: 4_000 });
    const { result, server } = await run([huge, huge], { maxOutputTokens: 16 });
    assert.equal(!result.ok && result.error.code, "llm_response_too_large");
    assert.equal(server.requests.length, 2); // the second is the follow-up request of run()
  });

  test("a slow stream is bounded by the invocation deadline (invocation_timeout)", async () => {
    const slow = streamedText("a slow answer that keeps coming", { delayMs: 100 });
    const { result } = await run([slow, slow], { deadlineMs: 400 });
    assert.equal(!result.ok && result.error.code, "invocation_timeout");
  });
});
