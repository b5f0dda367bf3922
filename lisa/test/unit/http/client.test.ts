import assert from "node:assert/strict";
import type { LookupAddress } from "node:dns";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, LookupFunction, Socket } from "node:net";
import { describe, test } from "node:test";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { HttpClient, type HttpClientOptions } from "../../../src/http/client.ts";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface Local {
  readonly url: string;
  readonly port: number;
  readonly connections: () => number;
  readonly peers: string[];
  close(): Promise<void>;
}

async function serve(handler: Handler, tune?: (server: Server) => void): Promise<Local> {
  const server = createServer(handler);
  tune?.(server);
  let connections = 0;
  const sockets = new Set<Socket>();
  const peers: string[] = [];
  server.on("connection", (socket: Socket) => {
    connections += 1;
    peers.push(socket.localAddress ?? "");
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`, port, connections: () => connections, peers,
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
}

const OPTIONS: HttpClientOptions = { connectTimeout: 2_000, headersTimeout: 2_000, bodyTimeout: 2_000, keepAliveTimeout: 2_000 };
const PAGE = "<p>" + "a compressible sentence. ".repeat(400) + "</p>";

async function client(t: { after(fn: () => Promise<void>): void }, options: Partial<HttpClientOptions> = {}): Promise<HttpClient> {
  const c = new HttpClient({ ...OPTIONS, ...options });
  t.after(() => c.close());
  return c;
}

describe("http client: bounded bodies and decoding", () => {
  for (const [encoding, encode] of [["gzip", gzipSync], ["deflate", deflateSync], ["br", brotliCompressSync]] as const) {
    test(`decodes a ${encoding} body through node:zlib when asked to`, async (t) => {
      const server = await serve((_req, res) => res.writeHead(200, { "content-encoding": encoding }).end(encode(Buffer.from(PAGE))));
      t.after(() => server.close());
      const http = await client(t, { decompress: true });
      const sent = await http.request({ url: new URL(server.url), method: "GET", headers: {} });
      assert.ok(sent.ok);
      const text = await sent.value.body.text(100_000);
      assert.ok(text.ok);
      assert.equal(text.value, PAGE);
    });
  }

  test("a small compressed body that expands past the cap is refused as http_body_too_large", async (t) => {
    const bomb = gzipSync(Buffer.alloc(50_000_000, 0x61));
    assert.ok(bomb.length < 100_000);
    const server = await serve((_req, res) => res.writeHead(200, { "content-encoding": "gzip" }).end(bomb));
    t.after(() => server.close());
    const http = await client(t, { decompress: true });
    const sent = await http.request({ url: new URL(server.url), method: "GET", headers: {} });
    assert.ok(sent.ok);
    const read = await sent.value.body.read(1_000_000);
    assert.equal(read.ok ? "" : read.error.code, "http_body_too_large");
  });

  test("an unknown or stacked content encoding is refused as http_unsupported_encoding", async (t) => {
    const server = await serve((_req, res) => res.writeHead(200, { "content-encoding": "gzip, br" }).end("x"));
    t.after(() => server.close());
    const http = await client(t, { decompress: true });
    const sent = await http.request({ url: new URL(server.url), method: "GET", headers: {} });
    assert.ok(sent.ok);
    const read = await sent.value.body.read(1_000);
    assert.equal(read.ok ? "" : read.error.code, "http_unsupported_encoding");
  });

  test("readUpTo keeps the first bytes of a longer body and marks it truncated", async (t) => {
    const server = await serve((_req, res) => res.end("0123456789"));
    t.after(() => server.close());
    const http = await client(t);
    const sent = await http.request({ url: new URL(server.url), method: "GET", headers: {} });
    assert.ok(sent.ok);
    const read = await sent.value.body.readUpTo(4);
    assert.ok(read.ok);
    assert.deepEqual([read.value.bytes.toString(), read.value.truncated], ["0123", true]);
  });
});

describe("http client: deadlines and abort", () => {
  test("a name resolution that never answers ends with http_connect_timeout", async (t) => {
    const never: LookupFunction = () => undefined;
    const http = await client(t, { connectTimeout: 150, lookup: never });
    const started = performance.now();
    const sent = await http.request({ url: new URL("http://hang.test:80/"), method: "GET", headers: {} });
    assert.equal(sent.ok ? "" : sent.error.code, "http_connect_timeout");
    assert.ok(performance.now() - started < 1_500);
  });

  test("headers that never come end with http_headers_timeout", async (t) => {
    const server = await serve(() => undefined);
    t.after(() => server.close());
    const http = await client(t, { headersTimeout: 150 });
    const sent = await http.request({ url: new URL(server.url), method: "GET", headers: {} });
    assert.equal(sent.ok ? "" : sent.error.code, "http_headers_timeout");
  });

  test("a body that stalls ends with http_body_timeout", async (t) => {
    const server = await serve((_req, res) => {
      res.writeHead(200);
      res.write("first chunk");
    });
    t.after(() => server.close());
    const http = await client(t, { bodyTimeout: 150 });
    const sent = await http.request({ url: new URL(server.url), method: "GET", headers: {} });
    assert.ok(sent.ok);
    const read = await sent.value.body.read(1_000);
    assert.equal(read.ok ? "" : read.error.code, "http_body_timeout");
  });

  test("the caller's signal ends the exchange while the body is read", async (t) => {
    const server = await serve((_req, res) => {
      res.writeHead(200);
      res.write("first chunk");
    });
    t.after(() => server.close());
    const http = await client(t);
    const controller = new AbortController();
    const sent = await http.request({ url: new URL(server.url), method: "GET", headers: {}, signal: controller.signal });
    assert.ok(sent.ok);
    setTimeout(() => controller.abort(), 50);
    const read = await sent.value.body.read(1_000);
    assert.equal(read.ok ? "" : read.error.code, "http_aborted");
  });

  test("an already aborted signal sends nothing", async (t) => {
    const server = await serve((_req, res) => res.end("x"));
    t.after(() => server.close());
    const http = await client(t);
    const sent = await http.request({ url: new URL(server.url), method: "GET", headers: {}, signal: AbortSignal.abort() });
    assert.equal(sent.ok ? "" : sent.error.code, "http_aborted");
    assert.equal(server.connections(), 0);
  });
});

describe("http client: connections", () => {
  test("the socket connects to the address the lookup checked and returned", async (t) => {
    const server = await serve((_req, res) => res.end("x"));
    t.after(() => server.close());
    const asked: string[] = [];
    const lookup = ((hostname: string, options: { all?: boolean }, callback: (e: Error | null, a: string | LookupAddress[], f?: number) => void) => {
      asked.push(hostname);
      if (options.all === true) callback(null, [{ address: "127.0.0.1", family: 4 }]);
      else callback(null, "127.0.0.1", 4);
    }) as LookupFunction;
    const http = await client(t, { lookup });
    const sent = await http.request({ url: new URL(`http://checked.test:${server.port}/`), method: "GET", headers: {} });
    assert.ok(sent.ok);
    sent.value.body.discard();
    assert.deepEqual(asked, ["checked.test"]);
    assert.deepEqual(server.peers, ["127.0.0.1"]);
  });

  test("the host guard refuses a connection before any socket is opened", async (t) => {
    const server = await serve((_req, res) => res.end("x"));
    t.after(() => server.close());
    const refusal = new Error("refused by policy");
    const http = await client(t, { guardHost: (host) => (host === "127.0.0.1" ? refusal : null) });
    const sent = await http.request({ url: new URL(server.url), method: "GET", headers: {} });
    assert.equal(sent.ok ? null : sent.error.cause, refusal);
    assert.equal(server.connections(), 0);
  });

  test("keeps the connection alive between requests", async (t) => {
    const server = await serve((_req, res) => res.end("x"));
    t.after(() => server.close());
    const http = await client(t);
    for (let i = 0; i < 3; i += 1) {
      const sent = await http.request({ url: new URL(server.url), method: "POST", headers: { "content-type": "text/plain" }, body: "hello" });
      assert.ok(sent.ok);
      assert.ok((await sent.value.body.text(100)).ok);
    }
    assert.equal(server.connections(), 1);
  });

  test("never follows a redirect: the 3xx and its Location are returned", async (t) => {
    const server = await serve((_req, res) => res.writeHead(302, { location: "http://127.0.0.1:1/elsewhere" }).end());
    t.after(() => server.close());
    const http = await client(t);
    const sent = await http.request({ url: new URL(server.url), method: "GET", headers: {} });
    assert.ok(sent.ok);
    assert.deepEqual([sent.value.status, sent.value.headers["location"]], [302, "http://127.0.0.1:1/elsewhere"]);
    sent.value.body.discard();
  });

  test("a refused connection is http_network with the socket's error code", async (t) => {
    const server = await serve(() => undefined);
    const port = server.port;
    await server.close();
    const http = await client(t);
    const sent = await http.request({ url: new URL(`http://127.0.0.1:${port}/`), method: "GET", headers: {} });
    assert.deepEqual(sent.ok ? [] : [sent.error.code, sent.error.causeCode], ["http_network", "ECONNREFUSED"]);
  });
});
