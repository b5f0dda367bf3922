import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ArtifactStore } from "../../../src/tools/artifacts.ts";
import { SourceRegistry } from "../../../src/tools/sources.ts";
import { WebError } from "../../../src/web/errors.ts";
import { call, fakeFetcher, htmlPage, openSession, toolConfig } from "./support.ts";

describe("source registry", () => {
  test("resolves any spelling of a registered URL by its normalised form", () => {
    const sources = new SourceRegistry();
    assert.equal(sources.register("HTTPS://Example.TEST:443/a?b=1#section", "Title"), "https://example.test/a?b=1");
    assert.deepEqual(sources.resolve("https://example.test/a?b=1"), { url: "https://example.test/a?b=1", title: "Title" });
    assert.deepEqual(sources.resolve("https://EXAMPLE.test/a?b=1#other"), { url: "https://example.test/a?b=1", title: "Title" });
  });

  test("does not resolve URLs that were never registered or that differ in path or query", () => {
    const sources = new SourceRegistry();
    sources.register("https://example.test/a", null);
    assert.equal(sources.resolve("https://example.test/b"), null);
    assert.equal(sources.resolve("https://example.test/a?x=1"), null);
    assert.equal(sources.resolve("http://example.test/a"), null);
    assert.equal(sources.resolve("not a url"), null);
  });

  test("refuses non-web URLs", () => {
    const sources = new SourceRegistry();
    assert.equal(sources.register("javascript:alert(1)", "x"), null);
    assert.equal(sources.register("file:///etc/passwd", "x"), null);
    assert.equal(sources.resolve("file:///etc/passwd"), null);
  });

  test("keeps the first non-empty title, collapsed and bounded", () => {
    const sources = new SourceRegistry();
    sources.register("https://example.test/", null);
    sources.register("https://example.test/", `  Two\n  words ${"x".repeat(400)}`);
    sources.register("https://example.test/", "Later");
    const title = sources.resolve("https://example.test/")?.title ?? "";
    assert.ok(title.startsWith("Two words "));
    assert.ok(title.length <= 200);
  });

  test("materialResultsUsed starts false", () => {
    assert.equal(new SourceRegistry().materialResultsUsed(), false);
  });
});

describe("material results and sources through the session", () => {
  const url = "https://example.test/doc";

  test("a successful fetch registers its final URL with the page title and counts as material", async () => {
    const fetcher = fakeFetcher({ [url]: htmlPage("https://example.test/final#frag", "<title>Final page</title>") });
    const { session } = openSession(toolConfig(), fetcher);
    assert.equal(session.sources.materialResultsUsed(), false);
    await call(session, "fetch_web_page", { url });
    assert.equal(session.sources.materialResultsUsed(), true);
    assert.deepEqual(session.sources.resolve("https://example.test/final"), { url: "https://example.test/final", title: "Final page" });
    assert.equal(session.sources.resolve(url), null, "only the final URL is a source");
  });

  test("failed and invalid calls register nothing and are not material", async () => {
    const fetcher = fakeFetcher({ [url]: new WebError("download_too_large") });
    const { session } = openSession(toolConfig(), fetcher);
    await call(session, "fetch_web_page", { url });
    await call(session, "fetch_web_page", { url: "ftp://example.test/" });
    await call(session, "nope", {});
    assert.equal(session.sources.materialResultsUsed(), false);
    assert.equal(session.sources.resolve(url), null);
  });

  test("sources stay readable after close but are not shared with another session", async () => {
    const fetcher = fakeFetcher({ [url]: htmlPage(url, "<title>T</title>") });
    const { session, another } = openSession(toolConfig(), fetcher);
    await call(session, "fetch_web_page", { url });
    const other = another();
    session.close();
    assert.notEqual(session.sources.resolve(url), null);
    assert.equal(other.sources.resolve(url), null);
    assert.equal(other.sources.materialResultsUsed(), false);
  });
});

describe("artifact store", () => {
  test("issues opaque random ids with a kind prefix", () => {
    const store = new ArtifactStore(10_000);
    const fields = { contentType: "text/html", charset: "utf-8", bytes: new Uint8Array(10), sourceUrl: "https://e.test/", title: null };
    const a = store.add({ kind: "html", ...fields });
    const b = store.add({ kind: "html", ...fields });
    const m = store.add({ kind: "markdown", ...fields });
    assert.ok(a.ok && b.ok && m.ok);
    assert.match(a.value.id, /^html_[A-Za-z0-9_-]{24}$/);
    assert.match(m.value.id, /^md_[A-Za-z0-9_-]{24}$/);
    assert.notEqual(a.value.id, b.value.id);
  });

  test("caps the total bytes: one oversized item is output_too_large, exhausting the budget is invocation_limit", () => {
    const store = new ArtifactStore(1_000);
    const make = (size: number) => ({
      kind: "html" as const, contentType: "text/html", charset: "utf-8", bytes: new Uint8Array(size), sourceUrl: "https://e.test/", title: null,
    });
    const big = store.add(make(1_001));
    assert.equal(!big.ok && big.error.code, "output_too_large");
    assert.ok(store.add(make(600)).ok);
    const second = store.add(make(600));
    assert.equal(!second.ok && second.error.code, "invocation_limit");
    assert.equal(store.remainingBytes(), 400);
    store.clear();
    assert.equal(store.remainingBytes(), 1_000);
  });
});
