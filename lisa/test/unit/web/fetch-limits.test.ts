import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpsServer } from "node:https";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { createAddressPolicy, type LookupFn } from "../../../src/web/address-policy.ts";
import { connectorOptions, webAgentOptions, WEB_CONNECTIONS_PER_ORIGIN } from "../../../src/web/connector.ts";
import { webSuite } from "../../support/web-suite.ts";
import { PAGE_HTML, ROUTES, fixedLookup, hostileWebConfig, startHostileWeb } from "../../support/hostile-web.ts";

const suite = webSuite();
const { fetcher, failureOf } = suite;
const failure = failureOf;

describe("fetch: deadlines", () => {
  test("slow headers end with a retryable timeout after the read timeout", async () => {
    const error = await failure(fetcher({ read_timeout_seconds: 0.2 }), `${suite.web.url}${ROUTES.slowHeaders}`);
    assert.equal(error.code, "timeout");
    assert.equal(error.retryable, true);
  });

  test("a stalled body ends with a timeout after the read timeout", async () => {
    const error = await failure(fetcher({ read_timeout_seconds: 0.2 }), `${suite.web.url}${ROUTES.stalledBody}`);
    assert.equal(error.code, "timeout");
  });

  test("a trickling body that never idles is stopped by the total deadline", async () => {
    const error = await failure(fetcher({ read_timeout_seconds: 2, total_timeout_seconds: 0.4 }), `${suite.web.url}${ROUTES.trickleBody}`);
    assert.equal(error.code, "timeout");
  });

  test("a name resolution that never answers is stopped by the connect timeout", async () => {
    const hanging: LookupFn = () => new Promise(() => undefined);
    const error = await failure(fetcher({ connect_timeout_seconds: 0.2 }, hanging), `http://hang.test:${suite.web.port}${ROUTES.page}`);
    assert.equal(error.code, "timeout");
  });

  test("the caller's abort cancels a download in progress", async () => {
    const controller = new AbortController();
    const pending = fetcher({ read_timeout_seconds: 5 }).fetch(`${suite.web.url}${ROUTES.slowHeaders}`, controller.signal);
    setTimeout(() => controller.abort(), 20);
    const result = await pending;
    assert.ok(!result.ok);
    assert.equal(result.error.code, "cancelled");
  });

  test("a caller signal that is already aborted fails without a request", async () => {
    const before = suite.web.requests.length;
    const error = await failure(fetcher(), `${suite.web.url}${ROUTES.page}`, AbortSignal.abort());
    assert.equal(error.code, "cancelled");
    assert.equal(suite.web.requests.length, before);
  });

  test("a caller timeout signal reports a timeout", async () => {
    const error = await failure(fetcher({ read_timeout_seconds: 5, total_timeout_seconds: 5 }), `${suite.web.url}${ROUTES.slowHeaders}`, AbortSignal.timeout(100));
    assert.equal(error.code, "timeout");
  });
});

describe("fetch: network failures", () => {
  test("an unknown host name is a network_error", async () => {
    const error = await failure(fetcher({}, fixedLookup({})), `http://unknown.test:${suite.web.port}${ROUTES.page}`);
    assert.equal(error.code, "network_error");
  });

  test("a refused connection is a retryable network_error", async () => {
    const closed = createNetServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await failure(fetcher(), `http://127.0.0.1:${port}/`);
    assert.equal(error.code, "network_error");
    assert.equal(error.retryable, true);
  });
});

describe("fetch: connection limits", () => {
  test("the web Agent is configured with a low per-origin connection limit and read timeouts", () => {
    const config = hostileWebConfig({ read_timeout_seconds: 7 });
    const options = webAgentOptions(config, () => undefined);
    assert.equal(options.connections, WEB_CONNECTIONS_PER_ORIGIN);
    assert.equal(WEB_CONNECTIONS_PER_ORIGIN, 2);
    assert.equal(options.headersTimeout, 7000);
    assert.equal(options.bodyTimeout, 7000);
    assert.equal(options.maxResponseSize, config.max_download_bytes);
  });

  test("concurrent downloads from one origin never open more than two connections", async (t) => {
    const own = await startHostileWeb();
    t.after(() => own.close());
    const f = fetcher();
    const results = await Promise.all(Array.from({ length: 6 }, () => f.fetch(`${own.url}${ROUTES.delay}?ms=60`, AbortSignal.timeout(10_000))));
    for (const result of results) assert.ok(result.ok);
    assert.equal(own.requests.length, 6);
    assert.ok(own.maxConcurrentConnections() <= 2, `saw ${own.maxConcurrentConnections()} connections`);
  });
});

function makeSelfSignedCert(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), "lisa-tls-"));
  try {
    execFileSync("openssl", [
      "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
      "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"),
    ], { stdio: "ignore" });
    return { key: readFileSync(join(dir, "key.pem"), "utf8"), cert: readFileSync(join(dir, "cert.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("fetch: TLS verification", () => {
  test("the connector options never disable certificate verification", () => {
    const config = hostileWebConfig();
    const options = connectorOptions(config, createAddressPolicy(config), fixedLookup({})) as Record<string, unknown>;
    assert.equal("rejectUnauthorized" in options, false);
    assert.equal("checkServerIdentity" in options, false);
    assert.equal("ca" in options, false);
  });

  test("an https server with a self-signed certificate is refused as a non-retryable network_error", async (t) => {
    const { key, cert } = makeSelfSignedCert();
    const server = createHttpsServer({ key, cert }, (_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(PAGE_HTML));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const port = (server.address() as AddressInfo).port;
    const error = await failure(fetcher(), `https://127.0.0.1:${port}/`);
    assert.equal(error.code, "network_error");
    assert.equal(error.retryable, false);
    assert.equal((error.cause as { code?: string }).code, "DEPTH_ZERO_SELF_SIGNED_CERT");
  });
});
