import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { AppConfig } from "../../../src/config/types.ts";
import type { ToolResult } from "../../../src/tools/port.ts";
import { UNTRUSTED_PREAMBLE } from "../../../src/tools/untrusted.ts";
import { createWebFetcher, type WebFetcher } from "../../../src/web/fetch.ts";
import { CANARY } from "../../support/config.ts";
import { type FakeSearxng, sampleResult, startFakeSearxng } from "../../support/fake-searxng.ts";
import { type HostileWeb, INJECTION_TEXT, LARGE_PAGE_BYTES, PAGE_TITLE, ROUTES, recordingLogger, startHostileWeb } from "../../support/hostile-web.ts";
import { call, openSession, toolConfig, untrustedBody } from "../../unit/tools/support.ts";

let web: HostileWeb;
let searx: FakeSearxng;
const fetchers: WebFetcher[] = [];

before(async () => {
  web = await startHostileWeb();
  searx = await startFakeSearxng();
});
after(async () => {
  for (const fetcher of fetchers) await fetcher.close();
  await searx.close();
  await web.close();
});

/** A session using the real bounded fetcher (loopback allowed for the hostile server) and real Pandoc. */
function realSession(webOverrides: Record<string, unknown> = {}) {
  const config: AppConfig = toolConfig({
    search: { endpoint: searx.endpoint, timeout_seconds: 5 },
    web: { allow_private_networks: true, ...webOverrides },
  });
  const fetcher = createWebFetcher(config.web, { log: recordingLogger() });
  fetchers.push(fetcher);
  return openSession(config, fetcher.fetch, { pandoc: { executable: "/usr/bin/pandoc" } });
}

function firstUrl(result: ToolResult): string {
  const match = /URL: (\S+)/.exec(untrustedBody(result));
  assert.ok(match?.[1] !== undefined, "a URL in the search result");
  return match[1];
}

describe("tool results feeding later tool requests", () => {
  test("one tool result feeds the next: search, fetch a result URL, convert its artifact", async () => {
    searx.respondWith({ kind: "results", results: [sampleResult(1, { url: `${web.url}${ROUTES.page}`, title: "Result page" })] });
    const { session } = realSession();
    const searched = await call(session, "web_search", { query: "hostile page" });
    assert.equal(searched.ok, true, searched.content);
    const fetched = await call(session, "fetch_web_page", { url: firstUrl(searched) });
    assert.equal(fetched.ok, true, fetched.content);
    assert.equal(fetched.metadata["title"], PAGE_TITLE);
    const converted = await call(session, "html_to_markdown", { artifact_id: fetched.metadata["artifact_id"] });
    assert.equal(converted.ok, true, converted.content);
    assert.match(untrustedBody(converted), /# Hello\n\nPlain content\./);
    const source = session.sources.resolve(`${web.url}${ROUTES.page}`);
    assert.equal(source?.title, "Result page", "the first registered title is kept");
    assert.equal(session.sources.materialResultsUsed(), true);
    session.close();
  });

  test("a page's prompt injection stays untrusted data: no shell tool, no secrets, no local files", async () => {
    searx.respondWith({ kind: "results", results: [sampleResult(1, { url: `${web.url}${ROUTES.injection}` })] });
    const { session, lines } = realSession();
    const outputs: ToolResult[] = [];
    outputs.push(await call(session, "web_search", { query: "notes" }));
    outputs.push(await call(session, "fetch_web_page", { url: firstUrl(outputs[0] as ToolResult) }));
    const converted = await call(session, "html_to_markdown", { artifact_id: outputs[1]?.metadata["artifact_id"] });
    outputs.push(converted);
    assert.equal(converted.ok, true, converted.content);
    assert.ok(converted.content.startsWith(UNTRUSTED_PREAMBLE));
    assert.ok(untrustedBody(converted).includes(INJECTION_TEXT), "the injection is returned as page content");
    assert.ok(!session.definitions().some((definition) => /shell|exec|command|file/i.test(definition.name)));
    outputs.push(await call(session, "shell", { command: "cat /etc/passwd" }));
    assert.equal(outputs[3]?.code, "unknown_tool");
    outputs.push(await call(session, "fetch_web_page", { url: "file:///etc/passwd" }));
    assert.equal(outputs[4]?.code, "invalid_url");
    for (const output of outputs) {
      const serialised = JSON.stringify(output);
      for (const secret of Object.values(CANARY)) assert.ok(!serialised.includes(secret), "no secret in any tool output");
      assert.ok(!serialised.includes("root:x:0:0"), "no local file content");
    }
    const logged = JSON.stringify(lines);
    assert.ok(!logged.includes(CANARY.searchKey));
    assert.ok(!logged.includes(ROUTES.injection) && !logged.includes("Ignore previous"), "no URLs or page text in tool logs");
    assert.equal(searx.requests.at(-1)?.headers["authorization"], `Bearer ${CANARY.searchKey}`, "the key went only to SearXNG");
    assert.ok(web.requestHeaders.every((headers) => headers["authorization"] === undefined), "no credentials sent to pages");
  });

  test("converts a ~2 MB HTML page with real Pandoc through the session", async () => {
    const { session } = realSession({
      max_download_bytes: 3_000_000, max_total_artifact_bytes: 10_000_000, pandoc_timeout_seconds: 120, total_timeout_seconds: 60,
      read_timeout_seconds: 30,
    });
    const fetched = await call(session, "fetch_web_page", { url: `${web.url}${ROUTES.large}` });
    assert.equal(fetched.ok, true, fetched.content);
    assert.equal(fetched.metadata["byte_count"], LARGE_PAGE_BYTES);
    const converted = await call(session, "html_to_markdown", { artifact_id: fetched.metadata["artifact_id"] });
    assert.equal(converted.ok, true, converted.content);
    assert.ok(converted.content.length <= 30_000);
    assert.equal(converted.metadata["truncated"], true);
    assert.ok(Number(converted.metadata["markdown_characters"]) > 1_000_000);
    session.close();
  });
});
