import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { WebError } from "../../../src/web/errors.ts";
import { call, failureJson, fakeFetcher, htmlPage, openSession, textPage, toolConfig, untrustedBody } from "./support.ts";

const URL_A = "https://example.test/a";
const BODY_MARKER = "BODY-TEXT-THAT-MUST-NOT-BE-RETURNED";

describe("fetch_web_page", () => {
  test("returns only metadata for HTML: artifact id, final URL, type, size and title", async () => {
    const html = `<html><head><title> The  Title </title></head><body><p>${BODY_MARKER}</p></body></html>`;
    const fetcher = fakeFetcher({ [URL_A]: htmlPage("https://Example.test/b#top", html) });
    const { session } = openSession(toolConfig(), fetcher);
    const result = await call(session, "fetch_web_page", { url: URL_A });
    assert.equal(result.ok, true);
    assert.equal(result.code, "ok");
    assert.ok(!result.content.includes(BODY_MARKER));
    const metadata = JSON.parse(untrustedBody(result)) as Record<string, unknown>;
    assert.deepEqual(Object.keys(metadata), ["artifact_id", "final_url", "content_type", "byte_count", "title"]);
    assert.match(String(metadata["artifact_id"]), /^html_/);
    assert.equal(metadata["final_url"], "https://example.test/b");
    assert.equal(metadata["content_type"], "text/html");
    assert.equal(metadata["byte_count"], Buffer.byteLength(html));
    assert.equal(metadata["title"], "The Title");
    assert.equal(result.metadata["artifact_id"], metadata["artifact_id"]);
  });

  test("returns plain text directly, decoded with its charset", async () => {
    const bytes = Buffer.from("Caf\u00e9 cr\u00e8me\r\nline two\u0000", "latin1");
    const fetcher = fakeFetcher({ [URL_A]: textPage(URL_A, bytes, "iso-8859-1") });
    const { session } = openSession(toolConfig(), fetcher);
    const result = await call(session, "fetch_web_page", { url: URL_A });
    assert.equal(result.ok, true);
    const body = untrustedBody(result);
    assert.ok(body.endsWith("Café crème\nline two"), body);
    assert.match(body, /"artifact_id":"txt_/);
  });

  test("falls back to UTF-8 for plain text without a charset", async () => {
    const fetcher = fakeFetcher({ [URL_A]: textPage(URL_A, Buffer.from("naïve ✓"), null) });
    const { session } = openSession(toolConfig(), fetcher);
    assert.ok(untrustedBody(await call(session, "fetch_web_page", { url: URL_A })).endsWith("naïve ✓"));
  });

  test("reports download failures by their stable code, with the HTTP status for http_error", async () => {
    const fetcher = fakeFetcher({
      "https://example.test/big": new WebError("download_too_large"),
      "https://example.test/gone": new WebError("http_error", { status: 404 }),
      "https://example.test/busy": new WebError("http_error", { status: 503 }),
      "https://example.test/slow": new WebError("timeout"),
      "https://example.test/local": new WebError("address_blocked"),
    });
    const { session } = openSession(toolConfig(), fetcher);
    const big = await call(session, "fetch_web_page", { url: "https://example.test/big" });
    assert.deepEqual(failureJson(big), {
      ok: false, code: "download_too_large", message: "The page exceeded the configured download-size limit.", retryable: false,
    });
    const gone = await call(session, "fetch_web_page", { url: "https://example.test/gone" });
    assert.equal(gone.code, "http_error");
    assert.match(failureJson(gone).message, /404/);
    assert.equal((await call(session, "fetch_web_page", { url: "https://example.test/busy" })).retryable, true);
    assert.equal((await call(session, "fetch_web_page", { url: "https://example.test/slow" })).code, "timeout");
    assert.equal((await call(session, "fetch_web_page", { url: "https://example.test/local" })).code, "address_blocked");
  });

  test("refuses a content type other than HTML or plain text defensively", async () => {
    const page = { ...htmlPage(URL_A, "%PDF"), contentType: "application/pdf" };
    const { session } = openSession(toolConfig(), fakeFetcher({ [URL_A]: page }));
    assert.equal((await call(session, "fetch_web_page", { url: URL_A })).code, "unsupported_content_type");
  });

  test("enforces the per-invocation artifact budget", async () => {
    const page = (size: number) => htmlPage(URL_A, `<p>${"x".repeat(size)}</p>`);
    const small = toolConfig({ web: { max_total_artifact_bytes: 1_024, max_download_bytes: 1_024 } });
    const tooBig = openSession(small, fakeFetcher({ [URL_A]: page(2_000) }));
    assert.equal((await call(tooBig.session, "fetch_web_page", { url: URL_A })).code, "output_too_large");
    const twice = openSession(small, fakeFetcher({ [URL_A]: page(600) }));
    assert.equal((await call(twice.session, "fetch_web_page", { url: URL_A })).ok, true);
    assert.equal((await call(twice.session, "fetch_web_page", { url: URL_A })).code, "invocation_limit");
  });
});

describe("artifact ids are scoped to one session", () => {
  test("rejects an unknown artifact id", async () => {
    const { session } = openSession(toolConfig());
    const result = await call(session, "html_to_markdown", { artifact_id: "html_AAAAAAAAAAAAAAAAAAAAAAAA" });
    assert.equal(result.code, "artifact_not_found");
  });

  test("rejects a foreign artifact id from another open session", async () => {
    const fetcher = fakeFetcher({ [URL_A]: htmlPage(URL_A, "<title>T</title>") });
    const { session, another } = openSession(toolConfig(), fetcher);
    const fetched = await call(session, "fetch_web_page", { url: URL_A });
    const artifactId = String(fetched.metadata["artifact_id"]);
    const result = await call(another(), "html_to_markdown", { artifact_id: artifactId });
    assert.equal(result.code, "artifact_not_found");
  });

  test("rejects an expired artifact id once its session is closed", async () => {
    const fetcher = fakeFetcher({ [URL_A]: htmlPage(URL_A, "<title>T</title>") });
    const { session, another } = openSession(toolConfig(), fetcher);
    const artifactId = String((await call(session, "fetch_web_page", { url: URL_A })).metadata["artifact_id"]);
    session.close();
    assert.equal((await call(another(), "html_to_markdown", { artifact_id: artifactId })).code, "artifact_not_found");
  });

  test("refuses to convert a plain-text artifact", async () => {
    const fetcher = fakeFetcher({ [URL_A]: textPage(URL_A, Buffer.from("plain")) });
    const { session } = openSession(toolConfig(), fetcher);
    const artifactId = String((await call(session, "fetch_web_page", { url: URL_A })).metadata["artifact_id"]);
    assert.equal((await call(session, "html_to_markdown", { artifact_id: artifactId })).code, "unsupported_content_type");
  });
});
