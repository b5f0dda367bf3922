// The response shapes recorded from the real llama.cpp llama-server and
// llama-cpp-python[server] with SmolLM2-135M (test/support/llama/record-shapes.ts),
// replayed to Lisa's client and `lisa check` helpers: each is tolerated, and
// each refusal gets the right code and is retried only when retrying can help.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { after, describe, test } from "node:test";
import { propsUrl, speedProblem, templateSeesTools, unlistedModel, validationRefusal } from "../../../src/check/preflight-llm-server.ts";
import { createLlmClient } from "../../../src/llm/client.ts";
import type { LlmTurn } from "../../../src/llm/types.ts";
import type { LisaError, Result } from "../../../src/errors.ts";
import { writeTestConfig } from "../../support/config.ts";
import { startScriptedLlm, type ScriptedLlm } from "../../support/scripted-llm.ts";
import { llmConfig, recordingLogger } from "./helpers.ts";

interface Fixture {
  readonly server: string;
  readonly status: number;
  readonly body: unknown;
}

const SERVERS = ["llama-server", "llama-cpp-python"] as const;
const FAST_RETRY = { baseDelayMs: 1, maxDelayMs: 5 };

function fixture(server: string, name: string): Fixture {
  return JSON.parse(readFileSync(new URL(`./fixtures/${server}/${name}.json`, import.meta.url), "utf8")) as Fixture;
}

function names(server: string): string[] {
  return readdirSync(new URL(`./fixtures/${server}/`, import.meta.url)).map((file) => file.replace(/\.json$/, ""));
}

const servers: ScriptedLlm[] = [];
after(async () => {
  for (const server of servers) await server.close();
});

/** Replays one fixture (for every attempt) to a fresh client; returns the result and the attempts made. */
async function replay(recorded: Fixture): Promise<{ result: Result<LlmTurn, LisaError>; attempts: number }> {
  const server = await startScriptedLlm(() => ({ status: recorded.status, body: recorded.body }));
  servers.push(server);
  const client = createLlmClient({ llm: llmConfig(server.url), log: recordingLogger(), retry: FAST_RETRY });
  try {
    const result = await client.complete({ messages: [{ role: "user", content: "hi" }], tools: [], signal: new AbortController().signal });
    return { result, attempts: server.requests.length };
  } finally {
    await client.close();
  }
}

function contentOf(recorded: Fixture): string {
  const body = recorded.body as { choices: { message: { content: string } }[] };
  return body.choices[0]?.message.content ?? "";
}

for (const server of SERVERS) {
  describe(`recorded ${server} shapes`, () => {
    const answers = names(server).filter((name) => fixture(server, name).status === 200 && (fixture(server, name).body as { choices?: unknown }).choices !== undefined);

    test("every recorded 200 completion becomes a text turn with the model's content; finish_reason length marks it truncated", async () => {
      assert.ok(answers.includes("plain-answer") && answers.includes("finish-length"), answers.join(","));
      for (const name of answers) {
        const recorded = fixture(server, name);
        const { result, attempts } = await replay(recorded);
        assert.ok(result.ok, `${name}: ${result.ok ? "" : result.error.code}`);
        assert.equal(attempts, 1);
        const finish = (recorded.body as { choices: { finish_reason: string }[] }).choices[0]?.finish_reason;
        assert.equal(result.value.kind, "text", name);
        assert.equal(result.value.kind === "text" && result.value.text, contentOf(recorded), name);
        assert.equal(result.value.truncated === true, finish === "length", name);
      }
    });

    test("the context-window refusal is llm_context_exceeded, not retried", async () => {
      const { result, attempts } = await replay(fixture(server, "context-overflow"));
      assert.equal(!result.ok && result.error.code, "llm_context_exceeded");
      assert.equal(attempts, 1);
    });

    test("a request the server refuses as invalid is llm_bad_request, not retried (llama-cpp-python says 500)", async () => {
      const refusals = names(server).filter((name) => /^bad-request|null-content|json-schema/.test(name) && fixture(server, name).status >= 400);
      assert.ok(refusals.length >= (server === "llama-cpp-python" ? 3 : 2), refusals.join(","));
      for (const name of refusals) {
        const { result, attempts } = await replay(fixture(server, name));
        assert.equal(!result.ok && result.error.code, "llm_bad_request", name);
        assert.equal(attempts, 1, name);
      }
    });

    test("an unknown model name is answered with 200 by the loaded model, so lisa check compares the name with /v1/models", () => {
      assert.equal(fixture(server, "unknown-model").status, 200);
      const served = (fixture(server, "models").body as { data: { id: string }[] }).data.map((entry) => entry.id);
      assert.equal(served.length, 1);
      assert.equal(unlistedModel(served[0] ?? "", served), null);
      assert.equal(unlistedModel("no-such-model", served)?.code, "llm_model_missing");
    });
  });
}

describe("llama-server specifics", () => {
  test("a 503 while the model loads is retried, and the next answer is used", async () => {
    const loading = fixture("llama-server", "loading-model");
    const answer = fixture("llama-server", "plain-answer");
    const server = await startScriptedLlm([{ status: loading.status, body: loading.body }, { status: 200, body: answer.body }]);
    servers.push(server);
    const client = createLlmClient({ llm: llmConfig(server.url), log: recordingLogger(), retry: FAST_RETRY });
    const result = await client.complete({ messages: [{ role: "user", content: "hi" }], tools: [], signal: new AbortController().signal });
    await client.close();
    assert.equal(result.ok && result.value.kind === "text" && result.value.text, contentOf(answer));
    assert.equal(server.requests.length, 2);
  });

  test("/props of SmolLM2's own template says it cannot see tools; /props lives beside /v1", () => {
    assert.equal(templateSeesTools(JSON.stringify(fixture("llama-server", "props").body)), false);
    assert.equal(templateSeesTools(JSON.stringify(fixture("llama-server", "props-tool-template").body)), true, "deploy/llama/chatml-tools.jinja");
    assert.equal(templateSeesTools("{\"detail\": \"Not Found\"}"), null);
    assert.equal(propsUrl("http://127.0.0.1:8080/v1").href, "http://127.0.0.1:8080/props");
    assert.equal(propsUrl("http://127.0.0.1:8080/llm/v1/?x=1").href, "http://127.0.0.1:8080/llm/props");
  });

  test("the generation speed llama-server reports decides whether max_output_tokens fits request_timeout_seconds", () => {
    const body = JSON.stringify(fixture("llama-server", "plain-answer").body);
    const speed = (fixture("llama-server", "plain-answer").body as { timings: { predicted_per_second: number } }).timings.predicted_per_second;
    const { config } = writeTestConfig();
    const fits = Math.ceil((700 / speed) * 1.5);
    assert.equal(speedProblem({ ...config, llm: { ...config.llm, max_output_tokens: 700, request_timeout_seconds: fits } }, body), null);
    const slow = speedProblem({ ...config, llm: { ...config.llm, max_output_tokens: 700, request_timeout_seconds: fits - 1 } }, body);
    assert.equal(slow?.code, "llm_too_slow");
    assert.match(slow?.fix ?? "", new RegExp(`raise llm\\.request_timeout_seconds to at least ${fits}`));
    assert.equal(speedProblem(config, JSON.stringify(fixture("llama-cpp-python", "plain-answer").body)), null, "no timings, no verdict");
  });
});

describe("llama-cpp-python specifics", () => {
  test("its 500 validation refusals are explained by lisa check: response_format, and a malformed request", () => {
    const { config } = writeTestConfig();
    const format = fixture("llama-cpp-python", "json-schema-format");
    const refusal = validationRefusal({ ...config, llm: { ...config.llm, response_format: "json_schema" } }, format.status, JSON.stringify(format.body));
    assert.equal(refusal?.code, "llm_response_format_unsupported");
    const nulls = fixture("llama-cpp-python", "assistant-null-content");
    assert.equal(validationRefusal(config, nulls.status, JSON.stringify(nulls.body))?.code, "llm_request_rejected");
    assert.equal(validationRefusal(config, 500, JSON.stringify({ error: { message: "CUDA out of memory", type: "internal_server_error" } })), null, "a real crash stays a server error");
  });

  test("the assistant tool-call message Lisa sends (content \"\") is accepted where content null was refused", () => {
    assert.equal(fixture("llama-cpp-python", "assistant-null-content").status, 500);
    assert.equal(fixture("llama-cpp-python", "assistant-empty-content").status, 200);
  });
});
