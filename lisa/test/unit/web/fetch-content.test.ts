import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { describe, test } from "node:test";
import { ResponseBody } from "../../../src/http/body.ts";
import type { WebFetcher } from "../../../src/web/fetch.ts";
import { webSuite } from "../../support/web-suite.ts";
import { checkResponseHeaders, parseContentType, readCappedBody } from "../../../src/web/response.ts";
import {
  CHUNK_COUNT,
  INJECTION_TEXT,
  LARGE_PAGE_BYTES,
  LYING,
  PAGE_HTML,
  PLAIN_TEXT,
  ROUTES,
  recordingLogger,
} from "../../support/hostile-web.ts";

const suite = webSuite();
const { fetcher, failureOf } = suite;
const failureCode = async (f: WebFetcher, path: string): Promise<string> => (await failureOf(f, `${suite.web.url}${path}`)).code;

describe("fetch: accepted content", () => {
  test("downloads an HTML page with its media type, charset, status and bytes", async () => {
    const result = await fetcher().fetch(`${suite.web.url}${ROUTES.page}#fragment`, AbortSignal.timeout(10_000));
    assert.ok(result.ok);
    assert.equal(result.value.finalUrl, `${suite.web.url}${ROUTES.page}`);
    assert.equal(result.value.status, 200);
    assert.equal(result.value.contentType, "text/html");
    assert.equal(result.value.charset, "utf-8");
    assert.equal(result.value.redirects, 0);
    assert.equal(Buffer.from(result.value.bytes).toString("utf8"), PAGE_HTML);
  });

  test("downloads plain text and lower-cases its charset", async () => {
    const result = await fetcher().fetch(`${suite.web.url}${ROUTES.plain}`, AbortSignal.timeout(10_000));
    assert.ok(result.ok);
    assert.equal(result.value.contentType, "text/plain");
    assert.equal(result.value.charset, "utf-8");
    assert.equal(Buffer.from(result.value.bytes).toString("utf8"), PLAIN_TEXT);
  });

  test("downloads a chunked response without Content-Length", async () => {
    const result = await fetcher().fetch(`${suite.web.url}${ROUTES.chunked}`, AbortSignal.timeout(10_000));
    assert.ok(result.ok);
    const text = Buffer.from(result.value.bytes).toString("utf8");
    for (let i = 0; i < CHUNK_COUNT; i += 1) assert.ok(text.includes(`<p>part ${i}</p>`));
  });

  test("returns prompt-injection text as inert bytes without acting on it", async () => {
    const result = await fetcher().fetch(`${suite.web.url}${ROUTES.injection}`, AbortSignal.timeout(10_000));
    assert.ok(result.ok);
    assert.ok(Buffer.from(result.value.bytes).toString("utf8").includes(INJECTION_TEXT));
    assert.equal(suite.web.requests.filter((r) => r.includes("passwd")).length, 0);
  });

  test("downloads a 2 MB page when the limit allows it", async () => {
    const result = await fetcher({ max_download_bytes: LARGE_PAGE_BYTES }).fetch(`${suite.web.url}${ROUTES.large}`, AbortSignal.timeout(10_000));
    assert.ok(result.ok);
    assert.equal(result.value.bytes.length, LARGE_PAGE_BYTES);
  });

  test("sends only the fixed User-Agent, Accept and identity Accept-Encoding headers", async () => {
    const result = await fetcher().fetch(`${suite.web.url}${ROUTES.echoHeaders}`, AbortSignal.timeout(10_000));
    assert.ok(result.ok);
    const headers = JSON.parse(Buffer.from(result.value.bytes).toString("utf8")) as Record<string, string>;
    assert.equal(headers["user-agent"], "LisaBot/Test");
    assert.equal(headers.accept, "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1");
    assert.equal(headers["accept-encoding"], "identity");
    const extra = Object.keys(headers).filter((k) => !["host", "connection", "user-agent", "accept", "accept-encoding"].includes(k));
    assert.deepEqual(extra, []);
  });

  test("ignores ambient HTTP_PROXY and HTTPS_PROXY variables", async () => {
    const saved = { http: process.env.HTTP_PROXY, https: process.env.HTTPS_PROXY, lower: process.env.http_proxy };
    process.env.HTTP_PROXY = "http://127.0.0.1:9";
    process.env.HTTPS_PROXY = "http://127.0.0.1:9";
    process.env.http_proxy = "http://127.0.0.1:9";
    try {
      const result = await fetcher().fetch(`${suite.web.url}${ROUTES.page}`, AbortSignal.timeout(10_000));
      assert.ok(result.ok);
    } finally {
      for (const [key, value] of [["HTTP_PROXY", saved.http], ["HTTPS_PROXY", saved.https], ["http_proxy", saved.lower]] as const) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  });
});

describe("fetch: size limits", () => {
  test("refuses a Content-Length above the limit before reading the body", async () => {
    assert.equal(await failureCode(fetcher(), ROUTES.large), "download_too_large");
    assert.equal(await failureCode(fetcher(), ROUTES.hugeLength), "download_too_large");
  });

  test("stops an endless stream once the byte limit is crossed", async () => {
    assert.equal(await failureCode(fetcher(), ROUTES.endless), "download_too_large");
  });

  test("stops a chunked body that grows past the limit", async () => {
    assert.equal(await failureCode(fetcher({ max_download_bytes: 40 }), ROUTES.chunked), "download_too_large");
  });

  test("treats a Content-Length longer than the body as a failed download", async () => {
    assert.equal(await failureCode(fetcher(), ROUTES.lyingLonger), "network_error");
  });

  test("reads no more than a Content-Length shorter than the body", async () => {
    const result = await fetcher().fetch(`${suite.web.url}${ROUTES.lyingShorter}`, AbortSignal.timeout(10_000));
    assert.ok(result.ok);
    assert.equal(result.value.bytes.length, LYING.shorterClaim);
  });

  test("accepts a body of exactly the limit and refuses one byte more", async () => {
    const exact = Buffer.byteLength(PAGE_HTML);
    const atLimit = await fetcher({ max_download_bytes: exact }).fetch(`${suite.web.url}${ROUTES.page}`, AbortSignal.timeout(10_000));
    assert.ok(atLimit.ok);
    assert.equal(await failureCode(fetcher({ max_download_bytes: exact - 1 }), ROUTES.page), "download_too_large");
  });

  test("the body reader destroys a stream whose real size crosses the cap, whatever was declared", async () => {
    let destroyed = false;
    const endless = new Readable({
      read() {
        this.push(Buffer.alloc(1024, 0x61));
      },
      destroy(error, callback) {
        destroyed = true;
        callback(error);
      },
    });
    const result = await readCappedBody(new ResponseBody(endless, { limits: { idleMs: 10_000, maxBytes: Number.MAX_SAFE_INTEGER, decompress: false } }), 10_000);
    assert.equal(result.ok, false);
    assert.equal(result.ok ? "" : result.error.code, "download_too_large");
    assert.equal(destroyed, true);
  });
});

describe("fetch: refused responses", () => {
  test("refuses a gzip Content-Encoding instead of decompressing", async () => {
    assert.equal(await failureCode(fetcher(), ROUTES.gzip), "unsupported_encoding");
  });

  test("refuses images, PDFs, archives and octet streams before reading the body", async () => {
    for (const path of [ROUTES.png, ROUTES.pdf, ROUTES.zip, ROUTES.octet]) {
      assert.equal(await failureCode(fetcher(), path), "unsupported_content_type", path);
    }
  });

  test("refuses a response without Content-Type instead of sniffing it", async () => {
    assert.equal(await failureCode(fetcher(), ROUTES.noType), "unsupported_content_type");
  });

  test("reports non-success statuses as http_error with the status; 5xx is retryable", async () => {
    const notFound = await fetcher().fetch(`${suite.web.url}${ROUTES.notFound}`, AbortSignal.timeout(10_000));
    assert.ok(!notFound.ok);
    assert.deepEqual([notFound.error.code, notFound.error.status, notFound.error.retryable], ["http_error", 404, false]);
    const broken = await fetcher().fetch(`${suite.web.url}${ROUTES.serverError}`, AbortSignal.timeout(10_000));
    assert.ok(!broken.ok);
    assert.deepEqual([broken.error.code, broken.error.status, broken.error.retryable], ["http_error", 500, true]);
  });

  test("refuses an oversized response header block", async () => {
    assert.equal(await failureCode(fetcher(), ROUTES.hugeHeader), "network_error");
  });

  test("header checks accept only HTML, XHTML and plain text, and refuse every non-identity encoding", () => {
    const shape = (headers: Record<string, string | string[]>) => checkResponseHeaders(headers, 1000);
    assert.ok(shape({ "content-type": "application/xhtml+xml" }).ok);
    assert.ok(shape({ "content-type": "TEXT/HTML; Charset=\"ISO-8859-1\"", "content-encoding": "identity" }).ok);
    for (const type of ["application/json", "text/css", "application/javascript", "video/mp4", "application/x-msdownload", "text/html-sandboxed"]) {
      assert.equal(shape({ "content-type": type }).ok, false, type);
    }
    assert.equal(shape({ "content-type": ["text/html", "image/png"] }).ok, false);
    for (const encoding of ["gzip", "br", "deflate", "identity, gzip", "x-unknown"]) {
      const result = shape({ "content-type": "text/html", "content-encoding": encoding });
      assert.equal(result.ok ? "" : result.error.code, "unsupported_encoding", encoding);
    }
    assert.deepEqual(parseContentType("text/html; charset=\"UTF-8\""), { contentType: "text/html", charset: "utf-8" });
    assert.deepEqual(parseContentType("text/plain; charset=<script>"), { contentType: "text/plain", charset: null });
  });
});

describe("fetch: logging", () => {
  test("logs codes, status classes, byte counts and a hashed host, never the URL or its query", async () => {
    const lines = recordingLogger();
    const f = fetcher({}, undefined, lines);
    await f.fetch(`${suite.web.url}${ROUTES.page}?token=secret-query-value`, AbortSignal.timeout(10_000));
    await f.fetch(`${suite.web.url}${ROUTES.notFound}?token=secret-query-value`, AbortSignal.timeout(10_000));
    const text = JSON.stringify(lines.lines);
    assert.equal(lines.lines.length, 2);
    assert.ok(!text.includes("secret-query-value"));
    assert.ok(!text.includes("127.0.0.1"));
    assert.ok(!text.includes(ROUTES.page));
    assert.match(String(lines.lines[0]?.fields.host), /^host_[0-9a-f]{12}$/);
    assert.equal(lines.lines[1]?.fields.code, "http_error");
    assert.equal(lines.lines[1]?.fields.status_class, "4xx");
  });
});
