import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { err } from "../../../src/errors.ts";
import { ArtifactStore } from "../../../src/tools/artifacts.ts";
import { runWithDeadline } from "../../../src/tools/deadline.ts";
import { UNTRUSTED_PREAMBLE } from "../../../src/tools/untrusted.ts";
import { silentLogger } from "../../../src/log/logger.ts";
import { call, failureJson, fakeFetcher, NEVER, openSession, textPage, toolConfig, htmlPage } from "./support.ts";

const config = toolConfig();
const PAGE = "https://example.test/page";

describe("tool registry", () => {
  test("offers exactly web_search, fetch_web_page and html_to_markdown with closed schemas", () => {
    const { session } = openSession(config);
    const definitions = session.definitions();
    assert.deepEqual(definitions.map((d) => d.name), ["web_search", "fetch_web_page", "html_to_markdown"]);
    for (const definition of definitions) {
      assert.equal(definition.parameters["type"], "object");
      assert.equal(definition.parameters["additionalProperties"], false);
      assert.ok(definition.description.length > 0);
    }
  });

  test("the web_search schema bounds result_count by the configured max_results", () => {
    const { session } = openSession(toolConfig({ search: { max_results: 4 } }));
    const search = session.definitions().find((d) => d.name === "web_search");
    const properties = search?.parameters["properties"] as Record<string, Record<string, unknown>>;
    assert.equal(properties["result_count"]?.["maximum"], 4);
    assert.equal(properties["query"]?.["maxLength"], 500);
  });
});

describe("argument validation before execution", () => {
  test("rejects an unknown tool name such as shell with the failure JSON", async () => {
    const { session, lines } = openSession(config);
    const result = await session.execute("shell", JSON.stringify({ command: "cat /etc/passwd" }), NEVER);
    assert.equal(result.ok, false);
    assert.equal(result.code, "unknown_tool");
    assert.deepEqual(Object.keys(failureJson(result)), ["ok", "code", "message", "retryable"]);
    assert.equal(failureJson(result).ok, false);
    assert.ok(!JSON.stringify(lines).includes("shell"), "the model-chosen name is not logged");
  });

  test("rejects a tool name that only differs in case or whitespace", async () => {
    const { session } = openSession(config);
    for (const name of ["Web_Search", " web_search", "web_search ", "__proto__", "constructor"]) {
      assert.equal((await call(session, name, { query: "x" })).code, "unknown_tool");
    }
  });

  test("rejects invalid JSON arguments", async () => {
    const { session } = openSession(config);
    const result = await session.execute("web_search", '{"query": "matrix', NEVER);
    assert.equal(result.code, "invalid_arguments");
    assert.equal(result.retryable, false);
  });

  test("rejects arguments that are not a JSON object", async () => {
    const fetcher = fakeFetcher({});
    const { session } = openSession(config, fetcher);
    for (const raw of ["[]", "null", "42", '"https://example.test/"', "true", ""]) {
      assert.equal((await session.execute("fetch_web_page", raw, NEVER)).code, "invalid_arguments", raw);
    }
    assert.equal(fetcher.calls.length, 0);
  });

  test("rejects extra arguments without running the tool", async () => {
    const fetcher = fakeFetcher({ [PAGE]: htmlPage(PAGE, "<title>x</title>") });
    const { session } = openSession(config, fetcher);
    const result = await call(session, "fetch_web_page", { url: PAGE, method: "POST" });
    assert.equal(result.code, "invalid_arguments");
    assert.match(failureJson(result).message, /unexpected properties/);
    assert.ok(!failureJson(result).message.includes("method"), "model-supplied keys are not echoed");
    assert.equal(fetcher.calls.length, 0);
  });

  test("rejects over-long strings", async () => {
    const fetcher = fakeFetcher({});
    const { session } = openSession(config, fetcher);
    assert.equal((await call(session, "web_search", { query: "q".repeat(501) })).code, "invalid_arguments");
    assert.equal((await call(session, "fetch_web_page", { url: `https://example.test/${"a".repeat(2_100)}` })).code, "invalid_arguments");
    assert.equal((await call(session, "html_to_markdown", { artifact_id: "h".repeat(101) })).code, "invalid_arguments");
    assert.equal(fetcher.calls.length, 0);
  });

  test("counts the query bound in code points, so 500 emoji are accepted by validation", async () => {
    const { session } = openSession(config);
    // The loopback endpoint on port 1 refuses connections: reaching it proves validation passed.
    const result = await call(session, "web_search", { query: "😀".repeat(500) });
    assert.notEqual(result.code, "invalid_arguments");
  });

  test("rejects raw arguments beyond the size bound before parsing", async () => {
    const { session } = openSession(config);
    const result = await session.execute("web_search", JSON.stringify({ query: "x", pad: "p".repeat(20_000) }), NEVER);
    assert.equal(result.code, "invalid_arguments");
    assert.match(failureJson(result).message, /longer than/);
  });

  test("rejects lone surrogates in strings", async () => {
    const fetcher = fakeFetcher({});
    const { session } = openSession(config, fetcher);
    const raw = '{"url": "https://example.test/\\ud800"}';
    const result = await session.execute("fetch_web_page", raw, NEVER);
    assert.equal(result.code, "invalid_arguments");
    assert.match(failureJson(result).message, /valid Unicode/);
    assert.equal((await session.execute("web_search", '{"query": "abc\\udc00"}', NEVER)).code, "invalid_arguments");
    assert.equal(fetcher.calls.length, 0);
  });

  test("rejects empty and whitespace-only strings after trimming", async () => {
    const { session } = openSession(config);
    assert.equal((await call(session, "web_search", { query: "   " })).code, "invalid_arguments");
    assert.equal((await call(session, "web_search", {})).code, "invalid_arguments");
  });

  test("rejects control characters in a query", async () => {
    const { session } = openSession(config);
    assert.equal((await call(session, "web_search", { query: "a\u0000b" })).code, "invalid_arguments");
    assert.equal((await call(session, "web_search", { query: "a\nb" })).code, "invalid_arguments");
  });

  test("rejects a result_count that is out of range or not an integer", async () => {
    const { session } = openSession(config);
    for (const count of [0, 9, 2.5, "3", -1]) {
      assert.equal((await call(session, "web_search", { query: "x", result_count: count })).code, "invalid_arguments", String(count));
    }
  });

  test("trims string arguments before use", async () => {
    const fetcher = fakeFetcher({ [PAGE]: htmlPage(PAGE, "<title>T</title>") });
    const { session } = openSession(config, fetcher);
    const result = await call(session, "fetch_web_page", { url: `  ${PAGE}\u00a0 ` });
    assert.equal(result.ok, true);
    assert.deepEqual(fetcher.calls, [PAGE]);
  });

  test("rejects a non-http URL as invalid_url without downloading", async () => {
    const fetcher = fakeFetcher({});
    const { session } = openSession(config, fetcher);
    for (const url of ["file:///etc/passwd", "ftp://example.test/", "//example.test/x", "https://user:pw@example.test/"]) {
      assert.equal((await call(session, "fetch_web_page", { url })).code, "invalid_url", url);
    }
    assert.equal(fetcher.calls.length, 0);
  });
});

describe("bounded results and deadlines", () => {
  test("bounds every result by max_tool_output_characters and wraps it as untrusted", async () => {
    const small = toolConfig({ web: { max_tool_output_characters: 600 } });
    const fetcher = fakeFetcher({ [PAGE]: textPage(PAGE, Buffer.from("word ".repeat(50_000))) });
    const { session } = openSession(small, fetcher);
    const result = await call(session, "fetch_web_page", { url: PAGE });
    assert.equal(result.ok, true);
    assert.ok(result.content.length <= 600, `length ${result.content.length}`);
    assert.ok(result.content.startsWith(UNTRUSTED_PREAMBLE));
    assert.equal(result.metadata["truncated"], true);
    assert.match(result.content, /output truncated/);
  });

  test("reports a tool that outlives its deadline as a retryable timeout", async () => {
    const never = () => new Promise<never>(() => undefined);
    const outcome = await runWithDeadline(never, 5, NEVER, { artifacts: new ArtifactStore(1_024), log: silentLogger });
    assert.equal(outcome.ok, false);
    assert.equal(!outcome.ok && outcome.error.code, "timeout");
    assert.equal(!outcome.ok && outcome.error.retryable, true);
  });

  test("reports cancellation by the caller's signal as cancelled", async () => {
    const controller = new AbortController();
    const fetcher = fakeFetcher({ [PAGE]: "hang" });
    const { session } = openSession(config, fetcher);
    const pending = call(session, "fetch_web_page", { url: PAGE }, controller.signal);
    setImmediate(() => controller.abort());
    const result = await pending;
    assert.equal(result.code, "cancelled");
    const before = new AbortController();
    before.abort();
    assert.equal((await call(session, "fetch_web_page", { url: PAGE }, before.signal)).code, "cancelled");
  });

  test("hands the tool a signal that aborts on the deadline", async () => {
    let seen: AbortSignal | null = null;
    const outcome = await runWithDeadline((context) => {
      seen = context.signal;
      return new Promise((resolve) => {
        context.signal.addEventListener("abort", () => resolve(err(new TypeError("late") as never)), { once: true });
      });
    }, 5, NEVER, { artifacts: new ArtifactStore(1_024), log: silentLogger });
    assert.equal(!outcome.ok && outcome.error.code, "timeout");
    assert.equal((seen as AbortSignal | null)?.aborted, true);
  });

  test("turns an unexpected exception inside a tool into internal_error", async () => {
    const throwing = Object.assign(async () => {
      throw new TypeError("bug");
    }, { calls: [] as string[] });
    const { session, lines } = openSession(config, throwing);
    const result = await call(session, "fetch_web_page", { url: PAGE });
    assert.equal(result.code, "internal_error");
    assert.ok(lines.some((line) => line.event === "tool_internal_error"));
  });

  test("is unusable after close", async () => {
    const { session } = openSession(config);
    session.close();
    await assert.rejects(call(session, "web_search", { query: "x" }));
  });
});
