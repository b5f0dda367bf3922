import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { createLlmClient, type LlmClient } from "../../../src/llm/client.ts";
import type { ChatMessage, CompleteRequest } from "../../../src/llm/types.ts";
import { CANARY, writeTestConfig } from "../../support/config.ts";
import {
  completion, errorReply, jsonAnswer, startScriptedLlm, textReply, toolCallsReply, type Script, type ScriptedLlm,
} from "../../support/scripted-llm.ts";
import { llmConfig, recordingLogger, TOOL_DEFINITIONS } from "./helpers.ts";

const MESSAGES: ChatMessage[] = [
  { role: "system", content: "policy" },
  { role: "user", content: "<room_context>hi</room_context>" },
];
const FAST_RETRY = { baseDelayMs: 5, maxDelayMs: 20 };

interface Harness {
  server: ScriptedLlm;
  client: LlmClient;
  log: ReturnType<typeof recordingLogger>;
}

const open: Harness[] = [];
after(async () => {
  for (const h of open) {
    await h.client.close();
    await h.server.close();
  }
});

async function harness(script: Script, overrides: Parameters<typeof llmConfig>[1] = {}, retry = FAST_RETRY): Promise<Harness> {
  const server = await startScriptedLlm(script);
  const log = recordingLogger();
  const client = createLlmClient({ llm: llmConfig(server.url, overrides), log, retry });
  const h = { server, client, log };
  open.push(h);
  return h;
}

function request(extra: Partial<CompleteRequest> = {}): CompleteRequest {
  return { messages: MESSAGES, tools: [], signal: new AbortController().signal, correlationId: "inv_test", ...extra };
}

function retryDelays(log: Harness["log"]): number[] {
  return log.lines.filter((l) => l.event === "llm_retry").map((l) => Number(l.fields["delay_ms"]));
}

describe("chat-completions request", () => {
  test("posts model, messages, tools, tool_choice, max_tokens and temperature to {base_url}/chat/completions", async () => {
    const { server, client } = await harness([jsonAnswer("hi")]);
    const result = await client.complete(request({ tools: TOOL_DEFINITIONS }));
    assert.equal(result.ok, true);
    const [req] = server.requests;
    assert.equal(req?.path, "/v1/chat/completions");
    assert.equal(req?.headers["content-type"], "application/json");
    const body = req?.body as Record<string, unknown>;
    assert.equal(body["model"], "test-model");
    assert.deepEqual(body["messages"], MESSAGES);
    assert.equal(body["tool_choice"], "auto");
    assert.equal(body["max_tokens"], 700);
    assert.equal(body["temperature"], 0.7);
    assert.equal(body["response_format"], undefined);
    const tools = body["tools"] as { type: string; function: { name: string; parameters: unknown } }[];
    assert.deepEqual(tools.map((t) => [t.type, t.function.name]), [["function", "web_search"], ["function", "fetch_web_page"], ["function", "html_to_markdown"]]);
    assert.deepEqual(tools[0]?.function.parameters, TOOL_DEFINITIONS[0]?.parameters);
  });

  test("omits tools and tool_choice when no tools are offered", async () => {
    const { server, client } = await harness([jsonAnswer("hi")]);
    await client.complete(request());
    const body = server.requests[0]?.body as Record<string, unknown>;
    assert.equal("tools" in body, false);
    assert.equal("tool_choice" in body, false);
  });

  test("response_format follows configuration: json_object, json_schema with a strict lisa_answer schema, none", async () => {
    const objectMode = await harness([jsonAnswer("a")], { response_format: "json_object" });
    await objectMode.client.complete(request());
    assert.deepEqual((objectMode.server.requests[0]?.body as Record<string, unknown>)["response_format"], { type: "json_object" });
    const schemaMode = await harness([jsonAnswer("a")], { response_format: "json_schema" });
    await schemaMode.client.complete(request());
    const format = (schemaMode.server.requests[0]?.body as Record<string, unknown>)["response_format"] as Record<string, any>;
    assert.equal(format["type"], "json_schema");
    assert.equal(format["json_schema"].name, "lisa_answer");
    assert.equal(format["json_schema"].strict, true);
    assert.equal(format["json_schema"].schema.additionalProperties, false);
    assert.deepEqual(Object.keys(format["json_schema"].schema.properties), ["markdown", "source_urls"]);
  });

  test("sends configured extra headers and no Authorization header without a key", async () => {
    const { Secret } = await import("../../../src/config/secret.ts");
    const { server, client } = await harness([jsonAnswer("a")], { api_key: null, extra_headers: { "X-Tenant": new Secret("llm.extra_headers.X-Tenant", "tenant-1") } });
    await client.complete(request());
    assert.equal(server.requests[0]?.headers["x-tenant"], "tenant-1");
    assert.equal(server.requests[0]?.headers["authorization"], undefined);
  });

  test("refuses messages over max_request_characters before sending (llm_request_too_large)", async () => {
    const { server, client } = await harness([jsonAnswer("a")], { max_request_characters: 2_000 });
    const big: ChatMessage[] = [{ role: "user", content: "x".repeat(2_100) }];
    const result = await client.complete(request({ messages: big }));
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.error.code, "llm_request_too_large");
    assert.equal(server.requests.length, 0);
  });
});

describe("retries within the deadline", () => {
  test("429 honours Retry-After in seconds, then succeeds", async () => {
    const { server, client, log } = await harness([errorReply(429, { "retry-after": "1" }), textReply("fine")]);
    const result = await client.complete(request());
    assert.deepEqual(result.ok && result.value, { kind: "text", text: "fine", truncated: false });
    assert.equal(server.requests.length, 2);
    assert.deepEqual(retryDelays(log), [1000]);
  });

  test("429 honours Retry-After as an HTTP date", async () => {
    const date = new Date(Date.now() + 2_000).toUTCString();
    const { server, client, log } = await harness([errorReply(429, { "retry-after": date }), textReply("fine")]);
    const result = await client.complete(request());
    assert.equal(result.ok, true);
    assert.equal(server.requests.length, 2);
    const [delay] = retryDelays(log);
    assert.ok(delay !== undefined && delay > 0 && delay <= 2_000);
  });

  test("a Retry-After beyond the invocation deadline gives up at once (llm_unavailable)", async () => {
    const { server, client, log } = await harness([errorReply(429, { "retry-after": "3600" }), textReply("never")]);
    const result = await client.complete(request({ deadline: performance.now() + 5_000 }));
    assert.equal(!result.ok && result.error.code, "llm_unavailable");
    assert.equal(server.requests.length, 1);
    assert.ok(log.lines.some((l) => l.event === "llm_retry_abandoned" && l.fields["code"] === "llm_rate_limited"));
  });

  test("5xx is retried with backoff, then succeeds", async () => {
    const { server, client } = await harness([errorReply(500), errorReply(503), jsonAnswer("ok")]);
    const result = await client.complete(request());
    assert.equal(result.ok, true);
    assert.equal(server.requests.length, 3);
  });

  test("transient failures that never clear end as llm_unavailable after the attempt budget", async () => {
    const { server, client } = await harness(() => errorReply(502), {}, { ...FAST_RETRY, maxAttempts: 3 } as never);
    const result = await client.complete(request());
    assert.equal(!result.ok && result.error.code, "llm_unavailable");
    assert.equal(!result.ok && result.error.retryable, true);
    assert.equal(server.requests.length, 3);
  });

  test("a dropped connection is retried", async () => {
    const { server, client } = await harness([{ drop: "before_response" }, jsonAnswer("ok")]);
    const result = await client.complete(request());
    assert.equal(result.ok, true);
    assert.equal(server.requests.length, 2);
  });

  test("a body cut off mid-stream (truncated JSON) is retried", async () => {
    const { server, client } = await harness([{ ...jsonAnswer("ok"), drop: "mid_body" }, jsonAnswer("ok")]);
    const result = await client.complete(request());
    assert.equal(result.ok, true);
    assert.equal(server.requests.length, 2);
  });

  test("a per-request timeout is retried", async () => {
    const { server, client, log } = await harness([{ ...jsonAnswer("slow"), delayMs: 4_000 }, jsonAnswer("fast")], { request_timeout_seconds: 1 });
    const result = await client.complete(request());
    assert.equal(result.ok && result.value.kind === "text" && result.value.text.includes("fast"), true);
    assert.equal(server.requests.length, 2);
    assert.ok(log.lines.some((l) => l.event === "llm_retry" && l.fields["code"] === "llm_timeout"));
  });
});

describe("failures that are not retried", () => {
  const cases: [string, Script, string][] = [
    ["401 is llm_unauthorized", [errorReply(401)], "llm_unauthorized"],
    ["403 is llm_unauthorized", [errorReply(403)], "llm_unauthorized"],
    ["404 is llm_not_found", [errorReply(404)], "llm_not_found"],
    ["400 naming the context length is llm_context_exceeded", [errorReply(400, {}, "This model's maximum context length is 4096 tokens")], "llm_context_exceeded"],
    ["other 400 is llm_bad_request", [errorReply(400, {}, "bad temperature")], "llm_bad_request"],
    ["a complete but truncated JSON body is llm_protocol_error", [{ rawBody: "{\"choices\": [{\"message\": {\"content\": \"hi" }], "llm_protocol_error"],
    ["an HTML body is llm_protocol_error", [{ rawBody: "<html>proxy</html>", headers: { "content-type": "text/html" } }], "llm_protocol_error"],
    ["an empty choices list is llm_protocol_error", [{ body: { choices: [] } }], "llm_protocol_error"],
    ["an error object with status 200 is llm_protocol_error", [{ body: { error: { message: "model not loaded" } } }], "llm_protocol_error"],
    ["a tool call without a function name is llm_protocol_error", [completion({ content: null, tool_calls: [{ id: "a", type: "function", function: { arguments: "{}" } }] }, "tool_calls")], "llm_protocol_error"],
    ["content of the wrong type is llm_protocol_error", [completion({ content: 42 })], "llm_protocol_error"],
  ];
  for (const [name, script, code] of cases) {
    test(name, async () => {
      const { server, client } = await harness(script);
      const result = await client.complete(request());
      assert.equal(!result.ok && result.error.code, code);
      assert.equal(server.requests.length, 1);
    });
  }

  test("a response body over the size ceiling is llm_response_too_large", async () => {
    const { client } = await harness([textReply("x".repeat(400_000))], { max_output_tokens: 16 });
    const result = await client.complete(request());
    assert.equal(!result.ok && result.error.code, "llm_response_too_large");
  });

  test("the invocation deadline firing mid-request is invocation_timeout", async () => {
    const { client } = await harness([{ ...jsonAnswer("late"), delayMs: 5_000 }]);
    const result = await client.complete(request({ signal: AbortSignal.timeout(200) }));
    assert.equal(!result.ok && result.error.code, "invocation_timeout");
  });

  test("a request is bounded by the remaining deadline, not only by request_timeout_seconds", async () => {
    const { server, client } = await harness(() => ({ ...jsonAnswer("late"), delayMs: 5_000 }));
    const result = await client.complete(request({ deadline: performance.now() + 300 }));
    assert.equal(!result.ok && result.error.code, "invocation_timeout");
    assert.equal(server.requests.length, 1);
  });

  test("a cancelled (non-deadline) signal is invocation_cancelled", async () => {
    const { client } = await harness([{ ...jsonAnswer("late"), delayMs: 5_000 }]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100).unref();
    const result = await client.complete(request({ signal: controller.signal }));
    assert.equal(!result.ok && result.error.code, "invocation_cancelled");
  });
});

describe("secrets", () => {
  test("the API key appears only in the Authorization header, never in bodies or logs", async () => {
    const { config } = writeTestConfig();
    const server = await startScriptedLlm([
      errorReply(500), toolCallsReply([{ name: "web_search", arguments: { query: "q" } }]), errorReply(401),
    ]);
    const log = recordingLogger();
    const client = createLlmClient({ llm: { ...config.llm, base_url: server.url }, log, retry: FAST_RETRY });
    open.push({ server, client, log });
    const first = await client.complete(request({ tools: TOOL_DEFINITIONS }));
    assert.equal(first.ok, true);
    const second = await client.complete(request());
    assert.equal(!second.ok && second.error.code, "llm_unauthorized");
    assert.ok(server.requests.length === 3);
    for (const req of server.requests) {
      assert.equal(req.headers["authorization"], `Bearer ${CANARY.llmKey}`);
      assert.equal(req.rawBody.includes(CANARY.llmKey), false);
      const otherHeaders = Object.entries(req.headers).filter(([name]) => name !== "authorization");
      assert.equal(JSON.stringify(otherHeaders).includes(CANARY.llmKey), false);
    }
    assert.ok(log.lines.length > 0);
    assert.equal(log.dump().includes(CANARY.llmKey), false);
    assert.equal(!second.ok && JSON.stringify({ m: second.error.message, s: second.error.stack }).includes(CANARY.llmKey), false);
  });
});
