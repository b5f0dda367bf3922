// Issue 33, point 4: the glue between Lisa's HTTP client and Node's Agent,
// driven directly against adversarial servers on 127.0.0.1: a request queued
// under a connection limit, concurrent first HTTPS requests, an abort right
// after request(), and a 101 nobody asked for.
import assert from "node:assert/strict";
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { createServer as createNetServer, type AddressInfo, type Socket } from "node:net";
import { after, before, describe, test } from "node:test";
import { HttpClient, type HttpClientOptions } from "../../../src/http/client.ts";
import { makeSelfSignedCert, serveHttp, serveHttps, trustInThisProcess, type TestCertificate } from "../../support/loopback.ts";

const OPTIONS: HttpClientOptions = { connectTimeout: 2_000, headersTimeout: 2_000, bodyTimeout: 2_000, keepAliveTimeout: 2_000 };

function client(t: { after(fn: () => Promise<void>): void }, options: Partial<HttpClientOptions> = {}): HttpClient {
  const c = new HttpClient({ ...OPTIONS, ...options });
  t.after(() => c.close());
  return c;
}

/** Every socket this process's net module opens as a client while `fn` runs. */
async function clientSockets<T>(fn: () => Promise<T>): Promise<{ value: T; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const onSocket = (message: unknown): void => {
    sockets.push((message as { socket: Socket }).socket);
  };
  subscribe("net.client.socket", onSocket);
  try {
    return { value: await fn(), sockets };
  } finally {
    unsubscribe("net.client.socket", onSocket);
  }
}

async function getText(http: HttpClient, url: string): Promise<string> {
  const sent = await http.request({ url: new URL(url), method: "GET", headers: {} });
  if (!sent.ok) return `failed: ${sent.error.code}`;
  const text = await sent.value.body.text(1_000);
  return text.ok ? text.value : `failed: ${text.error.code}`;
}

describe("LISA-HTTP-01: a request queued under the connection limit", () => {
  test("LISA-HTTP-01: a request queued for a freed socket gets the headers deadline, not the connect deadline", async (t) => {
    // Each answer takes longer than the connect deadline but well within the headers deadline.
    const server = await serveHttp((_req, res) => setTimeout(() => res.end("answered"), 750));
    t.after(() => server.close());
    const http = client(t, { connections: 2, connectTimeout: 250, headersTimeout: 10_000 });
    const answers = await Promise.all(Array.from({ length: 4 }, () => getText(http, server.url)));
    assert.deepEqual(answers, ["answered", "answered", "answered", "answered"]);
    assert.ok(server.connections() <= 2, `saw ${server.connections()} connections`);
  });

  test("LISA-HTTP-01: 30 queued requests leave no connect listener behind and raise no MaxListenersExceededWarning", async (t) => {
    const server = await serveHttp((_req, res) => res.end("answered"));
    t.after(() => server.close());
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning.name);
    };
    process.on("warning", onWarning);
    t.after(() => process.off("warning", onWarning));
    const http = client(t, { connections: 1 });
    const { value: answers, sockets } = await clientSockets(() => Promise.all(Array.from({ length: 30 }, () => getText(http, server.url))));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(new Set(answers), new Set(["answered"]));
    assert.equal(sockets.length, 1);
    for (const socket of sockets) {
      assert.deepEqual([socket.listenerCount("connect"), socket.listenerCount("secureConnect")], [0, 0]);
    }
    assert.deepEqual(warnings.filter((name) => name === "MaxListenersExceededWarning"), []);
  });
});

describe("LISA-HTTP-01: HTTPS through one lazily built agent", () => {
  let certificate: TestCertificate;
  let untrust: () => void = () => undefined;
  before(() => {
    certificate = makeSelfSignedCert();
    untrust = trustInThisProcess(certificate.cert);
  });
  after(() => untrust());

  test("LISA-HTTP-01: six concurrent first HTTPS requests with connections: 2 open at most two TLS connections, and close() leaves none", async (t) => {
    const server = await serveHttps(certificate, (_req, res) => setTimeout(() => res.end("secure"), 50));
    t.after(() => server.close());
    const http = new HttpClient({ ...OPTIONS, connections: 2 });
    const answers = await Promise.all(Array.from({ length: 6 }, () => getText(http, server.url)));
    assert.deepEqual(answers, Array.from({ length: 6 }, () => "secure"));
    assert.ok(server.connections() <= 2, `saw ${server.connections()} TLS connections`);
    assert.ok(server.maxOpen() <= 2, `saw ${server.maxOpen()} TLS connections open at once`);
    await http.close();
    await server.drained(5_000);
    assert.equal(server.open(), 0);
    const later = await http.request({ url: new URL(server.url), method: "GET", headers: {} });
    assert.equal(later.ok ? "" : later.error.code, "http_network");
  });

  test("LISA-HTTP-01: an abort right after request() on HTTPS ends the exchange with http_aborted (first and later requests)", async (t) => {
    // A server that takes the request and never answers: only the abort can end the wait.
    const server = await serveHttps(certificate, () => undefined);
    t.after(() => server.close());
    const http = client(t, { headersTimeout: 10_000 });
    for (const round of ["first", "second"]) {
      const controller = new AbortController();
      const pending = http.request({ url: new URL(server.url), method: "GET", headers: {}, signal: controller.signal });
      controller.abort();
      const sent = await pending;
      assert.equal(sent.ok ? "" : sent.error.code, "http_aborted", `${round} request`);
    }
  });

  test("LISA-HTTP-01: a close() while the first HTTPS agent is being built still closes it", async (t) => {
    const server = await serveHttps(certificate, (_req, res) => res.end("secure"));
    t.after(() => server.close());
    const http = new HttpClient(OPTIONS);
    const pending = http.request({ url: new URL(server.url), method: "GET", headers: {} });
    await http.close();
    const sent = await pending;
    assert.equal(sent.ok ? "" : sent.error.code, "http_network");
    await server.drained(5_000);
    assert.equal(server.open(), 0);
  });
});

describe("LISA-HTTP-01: a 101 nobody asked for", () => {
  test("LISA-HTTP-01: an unsolicited 101 ends at once with http_protocol_error, not at the headers deadline", async (t) => {
    const sockets = new Set<Socket>();
    const server = createNetServer((socket) => {
      sockets.add(socket);
      socket.once("data", () => socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    t.after(() => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }));
    const port = (server.address() as AddressInfo).port;
    const http = client(t, { headersTimeout: 10_000 });
    const sent = await http.request({ url: new URL(`http://127.0.0.1:${port}/`), method: "GET", headers: {} });
    assert.deepEqual(sent.ok ? [] : [sent.error.code, sent.error.causeCode, sent.error.retryable], ["http_protocol_error", "HTTP_UNEXPECTED_UPGRADE", false]);
  });
});
