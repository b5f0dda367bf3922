// Issue 33, point 4: what the HTTP client returns instead of throwing (a
// scheme it does not speak, a header value HTTP cannot carry) and the bounds
// of encoded bodies (an empty gzip body, raw bytes capped even when the
// decoded output stays small), against servers on 127.0.0.1.
import assert from "node:assert/strict";
import { inspect } from "node:util";
import { describe, test } from "node:test";
import { gzipSync } from "node:zlib";
import { HttpClient, type HttpClientOptions } from "../../../src/http/client.ts";
import { serveHttp } from "../../support/loopback.ts";

const OPTIONS: HttpClientOptions = { connectTimeout: 2_000, headersTimeout: 2_000, bodyTimeout: 2_000, keepAliveTimeout: 2_000 };
const CANARY = "lisa-canary-http-secret-7f3a";

function client(t: { after(fn: () => Promise<void>): void }, options: Partial<HttpClientOptions> = {}): HttpClient {
  const c = new HttpClient({ ...OPTIONS, ...options });
  t.after(() => c.close());
  return c;
}

/** Everything an error could show: message, cause chain, own fields, serialised. */
function everything(error: unknown): string {
  return `${inspect(error, { depth: 10 })}\n${JSON.stringify(error)}\n${String(error)}`;
}

describe("LISA-HTTP-01: failures are values, never throws", () => {
  for (const url of ["ftp://127.0.0.1/file", "file:///etc/passwd", "ws://127.0.0.1/"]) {
    test(`LISA-HTTP-01: a ${new URL(url).protocol} URL is refused as http_invalid_request`, async (t) => {
      const server = await serveHttp((_req, res) => res.end("x"));
      t.after(() => server.close());
      const http = client(t);
      const sent = await http.request({ url: new URL(url), method: "GET", headers: {} });
      assert.deepEqual(sent.ok ? [] : [sent.error.code, sent.error.retryable, sent.error.causeCode], ["http_invalid_request", false, "HTTP_UNSUPPORTED_SCHEME"]);
    });
  }

  const values: ReadonlyArray<readonly [string, string]> = [
    ["a stray newline at the end (an env: secret read with its line end)", `Bearer ${CANARY}\n`],
    ["a CR/LF in the middle (header injection)", `Bearer ${CANARY}\r\nx-injected: 1`],
    ["a character beyond Latin-1", `Bearer ${CANARY}\u2028`],
    ["a NUL byte", `Bearer ${CANARY}\u0000`],
  ];
  for (const [what, value] of values) {
    test(`LISA-HTTP-01: a header value with ${what} is refused as http_invalid_request, and the value is nowhere in the error`, async (t) => {
      let requests = 0;
      const server = await serveHttp((_req, res) => {
        requests += 1;
        res.end("x");
      });
      t.after(() => server.close());
      const http = client(t);
      const sent = await http.request({ url: new URL(server.url), method: "POST", headers: { authorization: value }, body: "{}" });
      assert.deepEqual(sent.ok ? [] : [sent.error.code, sent.error.retryable, sent.error.causeCode], ["http_invalid_request", false, "HTTP_INVALID_HEADER_VALUE"]);
      assert.ok(!sent.ok && !everything(sent.error).includes(CANARY), "the header value leaked into the error");
      assert.match(sent.ok ? "" : everything(sent.error), /authorization/);
      assert.equal(requests, 0);
      assert.equal(server.connections(), 0);
    });
  }

  test("LISA-HTTP-01: a header name that is not an HTTP token is refused as http_invalid_request", async (t) => {
    const http = client(t);
    const sent = await http.request({ url: new URL("http://127.0.0.1:1/"), method: "GET", headers: { "bad name\r\n": "v" } });
    assert.deepEqual(sent.ok ? [] : [sent.error.code, sent.error.causeCode], ["http_invalid_request", "HTTP_INVALID_HEADER_NAME"]);
  });

  test("LISA-HTTP-01: Latin-1 and tab characters in a header value are still sent", async (t) => {
    let seen: string | undefined;
    const server = await serveHttp((req, res) => {
      seen = req.headers["x-note"] as string | undefined;
      res.end("x");
    });
    t.after(() => server.close());
    const http = client(t);
    const sent = await http.request({ url: new URL(server.url), method: "GET", headers: { "x-note": "caf\u00e9\tok" } });
    assert.ok(sent.ok);
    sent.value.body.discard();
    assert.equal(Buffer.from(seen ?? "", "latin1").toString("latin1"), "caf\u00e9\tok");
  });
});

describe("LISA-HTTP-01: encoded bodies", () => {
  test("LISA-HTTP-01: a 204 with Content-Encoding: gzip is an empty body, not Z_BUF_ERROR", async (t) => {
    const server = await serveHttp((_req, res) => res.writeHead(204, { "content-encoding": "gzip" }).end());
    t.after(() => server.close());
    const http = client(t, { decompress: true });
    const sent = await http.request({ url: new URL(server.url), method: "GET", headers: {} });
    assert.ok(sent.ok);
    const read = await sent.value.body.read(1_000);
    assert.deepEqual(read.ok ? [sent.value.status, read.value.length] : [read.error.code, read.error.causeCode], [204, 0]);
  });

  for (const encoding of ["gzip", "deflate", "br"]) {
    test(`LISA-HTTP-01: Content-Length: 0 with Content-Encoding: ${encoding} is an empty body (read and readUpTo)`, async (t) => {
      const server = await serveHttp((_req, res) => res.writeHead(200, { "content-encoding": encoding, "content-length": "0" }).end());
      t.after(() => server.close());
      const http = client(t, { decompress: true });
      const first = await http.request({ url: new URL(server.url), method: "GET", headers: {} });
      assert.ok(first.ok);
      const text = await first.value.body.text(1_000);
      assert.deepEqual(text.ok ? text.value : text.error.code, "");
      const second = await http.request({ url: new URL(server.url), method: "GET", headers: {} });
      assert.ok(second.ok);
      const upTo = await second.value.body.readUpTo(1_000);
      assert.deepEqual(upTo.ok ? [upTo.value.bytes.length, upTo.value.truncated] : [upTo.error.code], [0, false]);
    });
  }

  test("LISA-HTTP-01: a truncated gzip body with bytes is still an error, not an empty body", async (t) => {
    const server = await serveHttp((_req, res) => res.writeHead(200, { "content-encoding": "gzip" }).end(gzipSync(Buffer.from("hello world")).subarray(0, 12)));
    t.after(() => server.close());
    const http = client(t, { decompress: true });
    const sent = await http.request({ url: new URL(server.url), method: "GET", headers: {} });
    assert.ok(sent.ok);
    const read = await sent.value.body.read(1_000);
    assert.equal(read.ok ? "" : read.error.code, "http_network");
  });

  /** A server streaming empty gzip members (20 bytes each, decoding to nothing) up to `totalBytes`, honouring backpressure. */
  async function emptyMembers(totalBytes: number): Promise<{ url: string; written(): number; close(): Promise<void> }> {
    const member = gzipSync(Buffer.alloc(0));
    const chunk = Buffer.concat(Array.from({ length: Math.floor(65_536 / member.length) }, () => member));
    let written = 0;
    const server = await serveHttp((_req, res) => {
      res.writeHead(200, { "content-encoding": "gzip" });
      const pump = (): void => {
        while (written < totalBytes && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end();
      };
      pump();
    });
    return { url: server.url, written: () => written, close: () => server.close() };
  }

  test("LISA-HTTP-01: 200 MB of empty gzip members are refused early as http_body_too_large (raw bytes are capped too)", async (t) => {
    const total = 200 * 1024 * 1024;
    const server = await emptyMembers(total);
    t.after(() => server.close());
    const http = client(t, { decompress: true, maxResponseSize: 1_000_000 });
    const sent = await http.request({ url: new URL(server.url), method: "GET", headers: {} });
    assert.ok(sent.ok);
    const read = await sent.value.body.read(1_000_000);
    assert.equal(read.ok ? `ok, ${read.value.length} bytes` : read.error.code, "http_body_too_large");
    assert.ok(server.written() < total / 10, `the server wrote ${server.written()} bytes before the refusal`);
  });

  test("LISA-HTTP-01: readUpTo stops at the cap of raw bytes too, and marks the body truncated", async (t) => {
    const server = await emptyMembers(200 * 1024 * 1024);
    t.after(() => server.close());
    const http = client(t, { decompress: true });
    const sent = await http.request({ url: new URL(server.url), method: "GET", headers: {} });
    assert.ok(sent.ok);
    const read = await sent.value.body.readUpTo(100_000);
    assert.deepEqual(read.ok ? [read.value.bytes.length, read.value.truncated] : [read.error.code], [0, true]);
  });
});
