import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { CANARY } from "../../support/config.ts";
import { type FakeSearxng, sampleResult, startFakeSearxng } from "../../support/fake-searxng.ts";
import { call, failureJson, openSession, toolConfig, untrustedBody } from "../../unit/tools/support.ts";

let searx: FakeSearxng;
let redirectTarget: FakeSearxng;

before(async () => {
  searx = await startFakeSearxng();
  redirectTarget = await startFakeSearxng();
});
after(async () => {
  await searx.close();
  await redirectTarget.close();
});

// Generous, so a loaded machine never turns an answer (or a 2.5 MB body being
// cut off) into a timeout; only the timeout test itself uses the short one.
const SEARCH_TIMEOUT_SECONDS = 15;

function searchSession(search: Record<string, unknown> = {}) {
  return openSession(toolConfig({ search: { endpoint: searx.endpoint, timeout_seconds: SEARCH_TIMEOUT_SECONDS, ...search } }));
}

describe("web_search against SearXNG", () => {
  test("search success: sends one GET with q and format=json and returns numbered results", async () => {
    searx.respondWith({ kind: "results", results: [sampleResult(1), sampleResult(2), sampleResult(3)] });
    const seen = searx.requests.length;
    const { session } = searchSession();
    const result = await call(session, "web_search", { query: "  matrix servers  " });
    assert.equal(result.ok, true);
    const request = searx.requests[seen];
    assert.equal(searx.requests.length, seen + 1);
    assert.equal(request?.method, "GET");
    assert.equal(request?.path, "/search");
    assert.deepEqual(request?.query, { q: "matrix servers", format: "json", pageno: "1" });
    const body = untrustedBody(result);
    assert.match(body, /^Search results \(3\):\n1\. Article 1\n {3}URL: https:\/\/example\.test\/article-1\n {3}Snippet of article 1\./);
    assert.match(body, /\n3\. Article 3\n/);
    assert.equal(result.metadata["result_count"], 3);
    assert.equal(session.sources.materialResultsUsed(), true);
    assert.deepEqual(session.sources.resolve("https://example.test/article-2"), { url: "https://example.test/article-2", title: "Article 2" });
  });

  test("truncates results locally to result_count", async () => {
    searx.respondWith({ kind: "results", results: Array.from({ length: 10 }, (_, i) => sampleResult(i)) });
    const { session } = searchSession();
    const result = await call(session, "web_search", { query: "x", result_count: 2 });
    assert.equal(result.metadata["result_count"], 2);
    assert.equal(session.sources.resolve("https://example.test/article-2"), null, "unreturned results are not sources");
    const defaulted = await call(session, "web_search", { query: "x" });
    assert.equal(defaulted.metadata["result_count"], 8, "max_results is the default count");
  });

  test("keeps only http and https result URLs, normalised and de-duplicated", async () => {
    searx.respondWith({
      kind: "results",
      results: [
        sampleResult(1, { url: "javascript:alert(1)" }),
        sampleResult(2, { url: "ftp://example.test/file" }),
        sampleResult(3, { url: "HTTPS://Example.TEST/x#frag" }),
        sampleResult(4, { url: "https://example.test/x" }),
        sampleResult(5, { url: "file:///etc/passwd" }),
      ],
    });
    const { session } = searchSession();
    const result = await call(session, "web_search", { query: "x" });
    assert.equal(result.metadata["result_count"], 1);
    assert.match(untrustedBody(result), /URL: https:\/\/example\.test\/x\n/);
    assert.ok(!result.content.includes("javascript:") && !result.content.includes("file:"));
  });

  test("sends the API key as a Bearer token but never returns or logs it", async () => {
    searx.respondWith({ kind: "results", results: [sampleResult(1)] });
    const seen = searx.requests.length;
    const { session, lines } = searchSession();
    const result = await call(session, "web_search", { query: "secret-query-text" });
    assert.equal(searx.requests[seen]?.headers["authorization"], `Bearer ${CANARY.searchKey}`);
    assert.ok(!result.content.includes(CANARY.searchKey));
    assert.ok(!JSON.stringify(lines).includes(CANARY.searchKey));
    assert.ok(!JSON.stringify(lines).includes("secret-query-text"), "the query is never logged");
  });

  test("sends the raw key in a custom api_key_header", async () => {
    searx.respondWith({ kind: "results", results: [] });
    const seen = searx.requests.length;
    const { session } = searchSession({ api_key_header: "X-API-Key" });
    const result = await call(session, "web_search", { query: "x" });
    assert.equal(searx.requests[seen]?.headers["x-api-key"], CANARY.searchKey);
    assert.equal(searx.requests[seen]?.headers["authorization"], undefined);
    assert.equal(untrustedBody(result), "No results.");
    assert.equal(session.sources.materialResultsUsed(), false, "an empty search is not material");
  });

  test("malformed JSON is search_unavailable with an operator log", async () => {
    searx.respondWith({ kind: "malformed" });
    const { session, lines } = searchSession();
    const result = await call(session, "web_search", { query: "x" });
    assert.equal(result.code, "search_unavailable");
    assert.ok(lines.some((line) => line.event === "search_malformed_response"));
    searx.respondWith({ kind: "malformed", body: '{"query":"x","results":{"not":"a list"}}' });
    assert.equal((await call(session, "web_search", { query: "x" })).code, "search_unavailable");
    assert.equal(session.sources.materialResultsUsed(), false);
  });

  test("skips individual results of the wrong shape", async () => {
    searx.respondWith({ kind: "malformed", body: JSON.stringify({ results: [{ title: "no url" }, { url: 42 }, sampleResult(7)] }) });
    const { session } = searchSession();
    const result = await call(session, "web_search", { query: "x" });
    assert.equal(result.metadata["result_count"], 1);
  });

  test("timeout: a SearXNG that never answers gives a retryable timeout", async () => {
    searx.respondWith({ kind: "slow" });
    const { session, lines } = searchSession({ timeout_seconds: 1 });
    const result = await call(session, "web_search", { query: "x" });
    assert.equal(result.code, "timeout");
    assert.equal(result.retryable, true);
    assert.ok(lines.some((line) => line.event === "search_timeout"));
  });

  test("oversized result: a response beyond the size cap is refused", async () => {
    searx.respondWith({ kind: "oversized", bytes: 2_500_000 });
    const { session, lines } = searchSession();
    const result = await call(session, "web_search", { query: "x" });
    assert.equal(result.code, "search_unavailable");
    assert.ok(lines.some((line) => line.event === "search_response_too_large"));
  });

  test("oversized result: a chunked response is cut off once it crosses the size cap", async () => {
    searx.respondWith({ kind: "oversized", bytes: 2_500_000, chunked: true });
    const { session, lines } = searchSession();
    const result = await call(session, "web_search", { query: "x" });
    assert.equal(result.code, "search_unavailable");
    assert.ok(lines.some((line) => line.event === "search_response_too_large"));
  });

  test("oversized result: the configured search.max_response_bytes applies below the hard ceiling", async () => {
    searx.respondWith({ kind: "oversized", bytes: 60_000 });
    const { session, lines } = searchSession({ max_response_bytes: 50_000 });
    const result = await call(session, "web_search", { query: "x" });
    assert.equal(result.code, "search_unavailable");
    assert.ok(lines.some((line) => line.event === "search_response_too_large" && line.fields?.["max_bytes"] === 50_000));
  });

  test("oversized result: long titles and snippets are bounded and the output fits the limit", async () => {
    const long = Array.from({ length: 8 }, (_, i) => sampleResult(i, { title: "T".repeat(5_000), content: "S ".repeat(50_000) }));
    searx.respondWith({ kind: "results", results: long });
    const { session } = openSession(toolConfig({
      search: { endpoint: searx.endpoint, timeout_seconds: SEARCH_TIMEOUT_SECONDS }, web: { max_tool_output_characters: 2_000 },
    }));
    const result = await call(session, "web_search", { query: "x" });
    assert.equal(result.ok, true);
    assert.ok(result.content.length <= 2_000);
    for (const line of untrustedBody(result).split("\n")) assert.ok(line.length <= 320, `line of ${line.length}`);
  });

  test("403 when JSON output is disabled explains the SearXNG setting to the operator", async () => {
    searx.respondWith({ kind: "json_disabled" });
    const { session, lines } = searchSession();
    const result = await call(session, "web_search", { query: "x" });
    assert.equal(result.code, "search_unavailable");
    assert.equal(failureJson(result).retryable, false);
    const line = lines.find((entry) => entry.event === "search_json_disabled");
    assert.match(String(line?.fields["hint"]), /formats: \[html, json\]/);
  });

  test("429 is search_rate_limited and retryable", async () => {
    searx.respondWith({ kind: "rate_limited" });
    const { session } = searchSession();
    const result = await call(session, "web_search", { query: "x" });
    assert.equal(result.code, "search_rate_limited");
    assert.equal(result.retryable, true);
  });

  test("a 5xx is a retryable search_unavailable", async () => {
    searx.respondWith({ kind: "status", status: 502 });
    const { session } = searchSession();
    const result = await call(session, "web_search", { query: "x" });
    assert.equal(result.code, "search_unavailable");
    assert.equal(result.retryable, true);
  });

  test("refuses a redirecting endpoint without forwarding the key to the new location", async () => {
    searx.respondWith({ kind: "redirect", location: redirectTarget.endpoint });
    const { session, lines } = searchSession();
    const result = await call(session, "web_search", { query: "x" });
    assert.equal(result.code, "search_unavailable");
    assert.ok(lines.some((line) => line.event === "search_endpoint_redirects"));
    assert.equal(redirectTarget.requests.length, 0);
  });

  test("an unreachable endpoint is a retryable search_unavailable", async () => {
    const { session } = openSession(toolConfig({ search: { endpoint: "http://127.0.0.1:1/search", timeout_seconds: SEARCH_TIMEOUT_SECONDS } }));
    const result = await call(session, "web_search", { query: "x" });
    assert.equal(result.code, "search_unavailable");
    assert.equal(result.retryable, true);
  });
});
