import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { RecordedRequest } from "../../support/scripted-llm.ts";
import { completion, errorReply, jsonAnswer, textReply, toolCallsReply } from "../../support/scripted-llm.ts";
import { runAnswerer } from "./harness.ts";
import { failedResult, fakeToolSession, messagesOf, okResult, toolNamesOf } from "./helpers.ts";

const ARTICLE = "https://example.org/article";

/** A session whose tools succeed: search registers ARTICLE, fetch returns an artifact id, convert returns Markdown. */
function researchSession() {
  return fakeToolSession({
    web_search: () => ({ result: okResult(`1. Article ${ARTICLE}`), registers: [ARTICLE] }),
    fetch_web_page: (args) => ({ result: okResult("fetched", { artifact_id: `html_for_${String(args["url"]).length}` }), registers: [String(args["url"])] }),
    html_to_markdown: (args) => ({
      result: args["artifact_id"] === `html_for_${ARTICLE.length}` ? okResult("# Article\nContinuwuity is a Matrix server.") : failedResult("artifact_not_found"),
      registers: [ARTICLE],
    }),
  });
}

function lastToolMessages(request: RecordedRequest) {
  return messagesOf(request.body).filter((m) => m.role === "tool");
}

describe("tool loop", () => {
  test("a final answer on the first request needs one iteration and no tools", async () => {
    const { result, server } = await runAnswerer([jsonAnswer("Indeed, hello.")]);
    assert.deepEqual(result.ok && result.value, { markdown: "Indeed, hello.", sources: [], llmIterations: 1, toolCalls: 0 });
    assert.equal(server.requests.length, 1);
    assert.deepEqual(toolNamesOf(server.requests[0]?.body), ["web_search", "fetch_web_page", "html_to_markdown"]);
  });

  test("several tool rounds end in an answer citing a registered source", async () => {
    const { result, server, session } = await runAnswerer([
      toolCallsReply([{ name: "web_search", arguments: { query: "continuwuity" } }]),
      toolCallsReply([{ name: "fetch_web_page", arguments: { url: ARTICLE } }]),
      (request) => {
        // The artifact id comes from the previous tool result, as a real model would read it.
        const fetched = lastToolMessages(request).at(-1)?.content ?? "";
        const artifact = /"artifact_id":"([^"]+)"/.exec(fetched)?.[1] ?? "missing";
        return toolCallsReply([{ name: "html_to_markdown", arguments: { artifact_id: artifact } }]);
      },
      jsonAnswer("Continuwuity is a Matrix server.", [ARTICLE]),
    ], { session: researchSession() });
    assert.deepEqual(result.ok && result.value, {
      markdown: "Continuwuity is a Matrix server.",
      sources: [{ url: ARTICLE, title: `Title of ${ARTICLE}` }],
      llmIterations: 4,
      toolCalls: 3,
    });
    assert.equal(server.requests.length, 4);
    const calls = (session as ReturnType<typeof fakeToolSession>).calls;
    assert.deepEqual(calls.map((c) => c.name), ["web_search", "fetch_web_page", "html_to_markdown"]);
    assert.deepEqual(JSON.parse(calls[2]?.rawArguments ?? "{}"), { artifact_id: `html_for_${ARTICLE.length}` }, "one tool result fed the later call");
    const convertResult = lastToolMessages(server.requests[3] as RecordedRequest).at(-1)?.content ?? "";
    assert.match(convertResult, /Continuwuity is a Matrix server/);
  });

  test("assistant tool calls are sent back with string arguments and each tool message carries the exact call id", async () => {
    const { server } = await runAnswerer([
      completion({ content: null, tool_calls: [
        { function: { name: "web_search", arguments: { query: "a" } } },
        { id: "vendor-id-7", type: "function", function: { name: "web_search", arguments: "{\"query\":\"b\"}" } },
      ] }, "stop"),
      jsonAnswer("Done.", [ARTICLE]),
    ], { session: researchSession() });
    const messages = messagesOf(server.requests[1]?.body);
    const assistant = messages.find((m) => m.role === "assistant");
    const ids = assistant?.tool_calls?.map((c) => c.id) ?? [];
    assert.equal(ids.length, 2);
    assert.equal(ids[1], "vendor-id-7");
    for (const call of assistant?.tool_calls ?? []) assert.equal(typeof call.function.arguments, "string");
    assert.equal(assistant?.tool_calls?.[0]?.function.arguments, "{\"query\":\"a\"}");
    assert.deepEqual(messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id), ids);
    assert.equal(assistant?.content, "", "a tool-call message without text has content \"\", never null (llama-cpp-python answers null with 500)");
  });

  test("calls run sequentially in model order", async () => {
    const order: string[] = [];
    let active = 0;
    const slow = (name: string) => async () => {
      active += 1;
      assert.equal(active, 1, "no two calls overlap");
      await new Promise((resolve) => setTimeout(resolve, 20));
      order.push(name);
      active -= 1;
      return { result: okResult(name) };
    };
    const session = fakeToolSession({ web_search: slow("search"), fetch_web_page: slow("fetch") });
    await runAnswerer([
      toolCallsReply([{ name: "fetch_web_page", arguments: { url: ARTICLE } }, { name: "web_search", arguments: { query: "q" } }]),
      jsonAnswer("Done."),
    ], { session });
    assert.deepEqual(order, ["fetch", "search"]);
  });

  test("a tool failure reaches the model as the failure JSON and the model can still answer", async () => {
    const session = fakeToolSession({ fetch_web_page: () => ({ result: failedResult("download_too_large", "The page exceeded the configured download-size limit.") }) });
    const { result, server } = await runAnswerer([
      toolCallsReply([{ name: "fetch_web_page", arguments: { url: ARTICLE } }]),
      jsonAnswer("I could not read that page."),
    ], { session });
    assert.equal(result.ok && result.value.markdown, "I could not read that page.");
    const [tool] = lastToolMessages(server.requests[1] as RecordedRequest);
    assert.deepEqual(JSON.parse(tool?.content ?? ""), { ok: false, code: "download_too_large", message: "The page exceeded the configured download-size limit.", retryable: false });
  });

  test("a tool that throws is reported to the model as tool_failed without internal details", async () => {
    const session = fakeToolSession({ web_search: () => { throw new Error("secret internal path /srv/x at line 3"); } });
    const { result, server, log } = await runAnswerer([toolCallsReply([{ name: "web_search", arguments: { query: "q" } }]), jsonAnswer("Sorry.")], { session });
    assert.equal(result.ok, true);
    const content = lastToolMessages(server.requests[1] as RecordedRequest)[0]?.content ?? "";
    assert.equal(JSON.parse(content).code, "tool_failed");
    assert.doesNotMatch(server.requests[1]?.rawBody ?? "", /secret internal path/);
    assert.doesNotMatch(log.dump(), /secret internal path/);
  });
});

describe("limits", () => {
  test("every LLM request counts as an iteration; the last one offers no tools; tool requests then stop with invocation_limit", async () => {
    const session = fakeToolSession({ web_search: () => ({ result: okResult("r") }) });
    const { result, server } = await runAnswerer(() => toolCallsReply([{ name: "web_search", arguments: { query: "again" } }]), { session, llm: { max_iterations: 3, max_tool_calls: 10 } });
    assert.equal(!result.ok && result.error.code, "invocation_limit");
    assert.equal(server.requests.length, 3);
    assert.deepEqual(server.requests.map((r) => toolNamesOf(r.body).length), [3, 3, 0]);
    assert.equal(session.calls.length, 2);
  });

  test("a batch that would exceed max_tool_calls is not run: every call id gets an invocation_limit error and tools are withdrawn", async () => {
    const session = fakeToolSession({ web_search: () => ({ result: okResult("r") }) });
    const { result, server } = await runAnswerer([
      toolCallsReply([{ name: "web_search", arguments: { query: "1" } }, { name: "web_search", arguments: { query: "2" } }, { name: "web_search", arguments: { query: "3" } }]),
      jsonAnswer("Answered without tools."),
    ], { session, llm: { max_tool_calls: 2 } });
    assert.deepEqual(result.ok && result.value, { markdown: "Answered without tools.", sources: [], llmIterations: 2, toolCalls: 0 });
    assert.equal(session.calls.length, 0);
    const second = server.requests[1] as RecordedRequest;
    const tools = lastToolMessages(second);
    assert.equal(tools.length, 3);
    for (const tool of tools) assert.equal(JSON.parse(tool.content ?? "").code, "invocation_limit");
    const callIds = messagesOf(second.body).find((m) => m.role === "assistant")?.tool_calls?.map((c) => c.id);
    assert.deepEqual(tools.map((t) => t.tool_call_id), callIds);
    assert.deepEqual(toolNamesOf(second.body), []);
  });

  test("invalid and failed calls count toward max_tool_calls", async () => {
    const session = fakeToolSession({ web_search: () => ({ result: failedResult("search_unavailable") }) });
    const { result, server } = await runAnswerer([
      toolCallsReply([{ name: "web_search", arguments: "{not json" }]),
      toolCallsReply([{ name: "web_search", arguments: { query: "q" } }]),
      toolCallsReply([{ name: "web_search", arguments: { query: "again" } }]),
      jsonAnswer("Search is down."),
    ], { session, llm: { max_tool_calls: 2 } });
    assert.deepEqual(result.ok && [result.value.toolCalls, result.value.llmIterations], [2, 4]);
    assert.equal(session.calls.length, 2);
    assert.equal(JSON.parse(lastToolMessages(server.requests[1] as RecordedRequest)[0]?.content ?? "").code, "invalid_arguments");
    assert.equal(JSON.parse(lastToolMessages(server.requests[3] as RecordedRequest).at(-1)?.content ?? "").code, "invocation_limit");
    assert.deepEqual(toolNamesOf(server.requests[3]?.body), []);
  });

  test("tool calls after tools were withdrawn stop with invocation_limit", async () => {
    const { result, server } = await runAnswerer(() => toolCallsReply([{ name: "web_search", arguments: { query: "q" } }, { name: "web_search", arguments: { query: "r" } }]), { llm: { max_tool_calls: 1 } });
    assert.equal(!result.ok && result.error.code, "invocation_limit");
    assert.equal(server.requests.length, 2);
  });

  test("max_tool_calls = 0 offers no tools at all", async () => {
    const { server } = await runAnswerer([jsonAnswer("No tools.")], { llm: { max_tool_calls: 0 } });
    assert.deepEqual(toolNamesOf(server.requests[0]?.body), []);
    assert.match(messagesOf(server.requests[0]?.body)[0]?.content ?? "", /No tools are available/);
  });

  test("a tool result that would overflow max_request_characters is replaced by output_too_large", async () => {
    const session = fakeToolSession({ web_search: () => ({ result: okResult("z".repeat(6_000)) }) });
    const { result, server } = await runAnswerer([toolCallsReply([{ name: "web_search", arguments: { query: "q" } }]), jsonAnswer("Short.")], { session, llm: { max_request_characters: 8_000 } });
    assert.equal(result.ok, true);
    assert.equal(JSON.parse(lastToolMessages(server.requests[1] as RecordedRequest)[0]?.content ?? "").code, "output_too_large");
  });

  test("a first request over max_request_characters fails with invocation_limit before anything is sent", async () => {
    const { result, server } = await runAnswerer([jsonAnswer("never")], { llm: { max_request_characters: 2_000 }, contextBlock: "x".repeat(3_000) });
    assert.equal(!result.ok && result.error.code, "invocation_limit");
    assert.equal(server.requests.length, 0);
  });

  test("the invocation deadline stops the loop with invocation_timeout", async () => {
    const { result } = await runAnswerer([{ ...jsonAnswer("late"), delayMs: 5_000 }], { request: { signal: AbortSignal.timeout(200) } });
    assert.equal(!result.ok && result.error.code, "invocation_timeout");
  });
});

describe("LLM failures map to stable codes", () => {
  const cases: [string, Parameters<typeof runAnswerer>[0], string][] = [
    ["exhausted transient failures are llm_unavailable", () => errorReply(503), "llm_unavailable"],
    ["401 is llm_unauthorized", [errorReply(401)], "llm_unauthorized"],
    ["404 is llm_protocol_error", [errorReply(404)], "llm_protocol_error"],
    ["a malformed body is llm_protocol_error", [{ rawBody: "{\"choices\": [" }], "llm_protocol_error"],
    ["a context-length refusal is invocation_limit", [errorReply(400, {}, "maximum context length exceeded")], "invocation_limit"],
  ];
  for (const [name, script, code] of cases) {
    test(name, async () => {
      const { result } = await runAnswerer(script);
      assert.equal(!result.ok && result.error.code, code);
    });
  }

  test("5xx then success still answers", async () => {
    const { result } = await runAnswerer([errorReply(500), textReply("Indeed, fine.")]);
    assert.equal(result.ok && result.value.markdown, "Indeed, fine.");
  });
});
