// `lisa check`'s llm probe against the shapes recorded from the real
// llama-server and llama-cpp-python (test/unit/llm/fixtures/): a chat
// template that cannot see tools, a 500 that is really a validation refusal,
// a model name the server does not list, and a speed too slow for the
// configured timeout. A tiny server replays the recorded bodies by path.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, test } from "node:test";
import { runPreflight, type PreflightResult } from "../../../src/check/preflight.ts";
import { writeTestConfig, type ConfigOverrides } from "../../support/config.ts";

interface Recorded {
  readonly status: number;
  readonly body: unknown;
}

function recorded(server: string, name: string): Recorded {
  return JSON.parse(readFileSync(new URL(`../../unit/llm/fixtures/${server}/${name}.json`, import.meta.url), "utf8")) as Recorded;
}

/** Serves recorded bodies by path; returns the base URL, the paths requested and a closer. */
async function replayServer(routes: Readonly<Record<string, Recorded>>): Promise<{ baseUrl: string; paths: string[]; close(): Promise<void> }> {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const path = (req.url ?? "/").split("?")[0] ?? "/";
      paths.push(path);
      const route = routes[path] ?? { status: 404, body: { error: { message: "File Not Found", type: "not_found_error", code: 404 } } };
      res.writeHead(route.status, { "content-type": "application/json" }).end(JSON.stringify(route.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    paths,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

function servedId(server: string): string {
  return (recorded(server, "models").body as { data: { id: string }[] }).data[0]?.id ?? "";
}

async function probeLlm(baseUrl: string, llm: Record<string, unknown>): Promise<PreflightResult> {
  const overrides: ConfigOverrides = { llm: { base_url: baseUrl, ...llm } };
  const { config } = writeTestConfig(overrides);
  const [result] = await runPreflight(config, { only: ["llm"] });
  assert.ok(result !== undefined);
  return result;
}

describe("lisa check against recorded llama-server shapes", () => {
  const routes = {
    "/v1/models": recorded("llama-server", "models"),
    "/props": recorded("llama-server", "props"),
    "/v1/chat/completions": recorded("llama-server", "tools-offered"),
  };

  test("a chat template that cannot see tools is llm_tools_invisible with the --chat-template-file fix", async () => {
    const server = await replayServer(routes);
    try {
      const result = await probeLlm(server.baseUrl, { model: servedId("llama-server") });
      assert.equal(result.code, "llm_tools_invisible", JSON.stringify(result));
      assert.match(result.fix ?? "", /--jinja --chat-template-file <a tool-capable template for this model>/);
      assert.deepEqual(server.paths, ["/v1/models", "/v1/chat/completions", "/props"]);
    } finally {
      await server.close();
    }
  });

  test("with tools switched off the template does not matter and /props is not read", async () => {
    const server = await replayServer(routes);
    try {
      const result = await probeLlm(server.baseUrl, { model: servedId("llama-server"), max_tool_calls: 0 });
      assert.equal(result.ok, true, JSON.stringify(result));
      assert.ok(!server.paths.includes("/props"));
    } finally {
      await server.close();
    }
  });

  test("a model name the server does not list fails although the server answered it", async () => {
    const server = await replayServer({ ...routes, "/v1/chat/completions": recorded("llama-server", "unknown-model") });
    try {
      const result = await probeLlm(server.baseUrl, { model: "no-such-model" });
      assert.equal(result.code, "llm_model_missing");
      assert.ok((result.fix ?? "").includes(servedId("llama-server")), result.fix);
    } finally {
      await server.close();
    }
  });

  test("a reported speed too slow for max_output_tokens within request_timeout_seconds is llm_too_slow", async () => {
    const answer = recorded("llama-server", "plain-answer");
    const slow = structuredClone(answer.body) as { timings: { predicted_per_second: number } };
    slow.timings.predicted_per_second = 2;
    const server = await replayServer({ ...routes, "/v1/chat/completions": { status: 200, body: slow } });
    try {
      const result = await probeLlm(server.baseUrl, { model: servedId("llama-server"), max_output_tokens: 700, request_timeout_seconds: 90 });
      assert.equal(result.code, "llm_too_slow");
      assert.match(result.fix ?? "", /about 2 tokens\/s.*raise llm\.request_timeout_seconds to at least 525/);
    } finally {
      await server.close();
    }
  });
});

describe("lisa check against recorded llama-cpp-python shapes", () => {
  test("its HTTP 500 for an unsupported response_format is explained as such, not as a server outage", async () => {
    const server = await replayServer({
      "/v1/models": recorded("llama-cpp-python", "models"),
      "/v1/chat/completions": recorded("llama-cpp-python", "json-schema-format"),
    });
    try {
      const result = await probeLlm(server.baseUrl, { model: servedId("llama-cpp-python"), response_format: "json_schema" });
      assert.equal(result.code, "llm_response_format_unsupported", JSON.stringify(result));
      assert.match(result.fix ?? "", /HTTP 500, a validation error/);
    } finally {
      await server.close();
    }
  });
});
