// runPreflight's network probes in process: each failure kind of the Matrix,
// LLM and SearXNG probes maps to its code and fix, deadlines and cancellation
// are honoured, and nothing a server says can smuggle a secret into a result.

import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { runPreflight, type PreflightCheckName, type PreflightResult } from "../../../src/check/preflight.ts";
import type { AppConfig } from "../../../src/config/types.ts";
import { CANARY, writeTestConfig, type ConfigOverrides } from "../../support/config.ts";
import { startFakeHomeserver, type FakeHomeserver } from "../../support/fake-homeserver.ts";
import { startFakeSearxng, type FakeSearxng } from "../../support/fake-searxng.ts";
import { LISA } from "../../support/lisa-harness.ts";
import { errorReply, startScriptedLlm, textReply, type ScriptedLlm } from "../../support/scripted-llm.ts";

interface TinyServer {
  readonly url: string;
  readonly requests: { method: string; path: string }[];
  close(): Promise<void>;
}

/** A throwaway HTTP server for shapes the shared fakes do not produce. */
async function startTinyServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<TinyServer> {
  const requests: { method: string; path: string }[] = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? "", path: req.url ?? "" });
    req.resume();
    req.on("end", () => handler(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** A loopback port with nothing listening on it. */
async function closedPortUrl(): Promise<string> {
  const tiny = await startTinyServer((_req, res) => res.end());
  await tiny.close();
  return tiny.url;
}

/** Logs Lisa in on `deviceId` as a running service would; resolves to the access token. */
async function passwordLogin(url: string, deviceId: string): Promise<string> {
  const response = await fetch(`${url}/_matrix/client/v3/login`, {
    method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ type: "m.login.password", identifier: { type: "m.id.user", user: LISA }, password: CANARY.matrixPassword, device_id: deviceId }),
  });
  assert.equal(response.status, 200);
  return String(((await response.json()) as { access_token?: unknown }).access_token);
}

async function whoamiStatus(url: string, token: string): Promise<number> {
  const response = await fetch(`${url}/_matrix/client/v3/account/whoami`, { headers: { authorization: `Bearer ${token}` } });
  await response.body?.cancel();
  return response.status;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

async function probe(name: PreflightCheckName, overrides: ConfigOverrides, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<PreflightResult> {
  const { config } = writeTestConfig(overrides);
  const results = await runPreflight(config, { ...options, only: [name] });
  assert.equal(results.length, 1);
  const [result] = results;
  assert.ok(result !== undefined);
  assertClean(result, config);
  return result;
}

function assertClean(result: PreflightResult, config: AppConfig): void {
  const text = JSON.stringify(result);
  for (const secret of [...Object.values(CANARY), ...config.secrets.map((s) => s.reveal())]) {
    assert.ok(!text.includes(secret), `a secret appeared in the ${result.name} result`);
  }
}

let hs: FakeHomeserver;
let llm: ScriptedLlm;
let search: FakeSearxng;

before(async () => {
  hs = await startFakeHomeserver({ profile: "continuwuity" });
  hs.addUser(LISA, CANARY.matrixPassword);
  llm = await startScriptedLlm(() => textReply("OK"));
  search = await startFakeSearxng();
});

after(async () => {
  await Promise.all([hs.close(), llm.close(), search.close()]);
});

describe("matrix probe", () => {
  test("logs in once on a device of its own, logs that device out, and leaves Lisa's device and token alone", async () => {
    // A running Lisa: her device and a valid token before the check.
    const lisaToken = await passwordLogin(hs.url, "LISATEST");
    const logoutsBefore = hs.requests("logout").length;
    const loginsBefore = hs.loginCount;
    const result = await probe("matrix", { matrix: { homeserver_url: hs.url } });
    assert.equal(result.ok, true);
    assert.match(result.detail ?? "", /^logged in as @lisa:localhost on device LISATEST_CHECK; note: the check used a device of its own \(LISATEST_CHECK\), which it logs out when it ends; Lisa's device LISATEST and its token are left alone$/);
    assert.doesNotMatch(result.detail ?? "", /replace/);
    assert.equal(hs.loginCount - loginsBefore, 1, "one login");
    assert.equal(hs.requests("logout").length - logoutsBefore, 1, "one logout");
    assert.deepEqual(hs.devices(LISA).map((d) => d.deviceId), ["LISATEST"], "the check's device is gone, Lisa's is kept");
    assert.equal((await whoamiStatus(hs.url, lisaToken)), 200, "Lisa's token still works");
  });

  test("explains a homeserver that offers no password login", async () => {
    const sso = await startTinyServer((_req, res) => json(res, 200, { flows: [{ type: "m.login.sso" }] }));
    try {
      const result = await probe("matrix", { matrix: { homeserver_url: sso.url } });
      assert.equal(result.code, "matrix_no_password_login");
      assert.match(result.fix ?? "", /offers no password login \(m\.login\.password\)/);
      assert.deepEqual(sso.requests.map((r) => r.method), ["GET"], "no password is posted to a server without password login");
    } finally {
      await sso.close();
    }
  });

  test("says the homeserver cannot be reached when nothing listens", async () => {
    const url = await closedPortUrl();
    const result = await probe("matrix", { matrix: { homeserver_url: url } });
    assert.equal(result.code, "matrix_network");
    assert.equal(result.fix, `cannot reach ${url}: check matrix.homeserver_url, DNS, the firewall and TLS`);
  });

  test("explains a URL that does not serve the client-server API", async () => {
    const web = await startTinyServer((_req, res) => res.writeHead(404, { "content-type": "text/html" }).end("<h1>no</h1>"));
    try {
      const result = await probe("matrix", { matrix: { homeserver_url: web.url } });
      assert.equal(result.code, "matrix_not_found");
      assert.match(result.fix ?? "", /does not speak the Matrix client-server API \(HTTP 404\)/);
    } finally {
      await web.close();
    }
  });
});

describe("llm probe", () => {
  test("reports an API key refused by /models without sending a completion", async () => {
    const guarded = await startTinyServer((_req, res) => json(res, 401, { error: { message: "bad key" } }));
    try {
      const result = await probe("llm", { llm: { base_url: `${guarded.url}/v1` } });
      assert.equal(result.code, "llm_unauthorized");
      assert.match(result.fix ?? "", /the LLM rejected the API key \(HTTP 401\)/);
      assert.deepEqual(guarded.requests.map((r) => `${r.method} ${r.path}`), ["GET /v1/models"]);
    } finally {
      await guarded.close();
    }
  });

  // llama.cpp and llama-cpp-python answer any model name with their one loaded model (measured, LISA-COMPAT-01).
  test("fails a model the list omits even when the server answers for it, naming the served id", async () => {
    const single = await startScriptedLlm(() => textReply("OK"), { model: "/models/some-file.gguf" });
    try {
      const result = await probe("llm", { llm: { base_url: single.url } });
      assert.equal(result.code, "llm_model_missing");
      assert.match(result.fix ?? "", /model test-model is not listed by \/models \(served: \/models\/some-file\.gguf\)/);
      assert.match(result.fix ?? "", /set llm\.model to the served id/);
    } finally {
      await single.close();
    }
  });

  test("explains a refused response_format and sends the configured one", async () => {
    const strict = await startScriptedLlm(() => errorReply(400, {}, "response_format json_schema is not supported"));
    try {
      const result = await probe("llm", { llm: { base_url: strict.url, response_format: "json_schema" } });
      assert.equal(result.code, "llm_response_format_unsupported");
      assert.match(result.fix ?? "", /set llm\.response_format to a mode it supports/);
      const body = strict.requests[0]?.body as { response_format?: { type?: string } };
      assert.equal(body.response_format?.type, "json_schema");
    } finally {
      await strict.close();
    }
  });

  test("says where the chat-completions endpoint is missing when base_url lacks /v1", async () => {
    const bare = await startTinyServer((_req, res) => res.writeHead(404).end("Not Found"));
    try {
      const result = await probe("llm", { llm: { base_url: bare.url } });
      assert.equal(result.code, "llm_endpoint_missing");
      assert.equal(result.fix, `no chat-completions endpoint at ${bare.url}/chat/completions: llm.base_url usually ends in /v1`);
    } finally {
      await bare.close();
    }
  });

  test("rejects a 200 that is not a chat completion", async () => {
    const html = await startTinyServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<html>hi</html>"));
    try {
      const result = await probe("llm", { llm: { base_url: `${html.url}/v1` } });
      assert.equal(result.code, "llm_protocol_error");
    } finally {
      await html.close();
    }
  });

  test("says the LLM cannot be reached when nothing listens", async () => {
    const url = await closedPortUrl();
    const result = await probe("llm", { llm: { base_url: `${url}/v1` } });
    assert.equal(result.code, "llm_unreachable");
    assert.match(result.fix ?? "", /^cannot reach the LLM at http:\/\/127\.0\.0\.1:\d+\/v1 \(ECONNREFUSED\)/);
  });

  test("scrubs secrets and control characters a hostile server puts in its model list", async () => {
    const hostile = await startTinyServer((req, res) => {
      if (req.url === "/v1/models") json(res, 200, { data: [{ id: CANARY.llmKey }, { id: `evil\u001b[2Jmodel` }, ...Array.from({ length: 12 }, (_, i) => ({ id: `m${i}` }))] });
      else json(res, 404, { error: { message: "model not found" } });
    });
    try {
      const result = await probe("llm", { llm: { base_url: `${hostile.url}/v1` } });
      assert.equal(result.code, "llm_model_missing");
      assert.match(result.fix ?? "", /served: \[REDACTED\], evil\?\[2Jmodel, m0, .* and 4 more/);
      assert.ok(!(result.fix ?? "").includes("\u001b"));
    } finally {
      await hostile.close();
    }
  });
});

describe("search probe", () => {
  const endpoint = (): ConfigOverrides => ({ search: { endpoint: search.endpoint } });

  test("sends the search key in its header and counts the results", async () => {
    search.respondWith({ kind: "results", results: [] });
    const result = await probe("search", endpoint());
    assert.equal(result.ok, true);
    assert.match(result.detail ?? "", /0 results for the test query \(are SearXNG's engines working\?\)/);
    assert.equal(search.requests.at(-1)?.headers.authorization, `Bearer ${CANARY.searchKey}`);
  });

  test("reports a redirect without following it or printing its query", async () => {
    search.respondWith({ kind: "redirect", location: "https://search.example.test/search?token=leaky" });
    const before = search.requests.length;
    const result = await probe("search", endpoint());
    assert.equal(result.code, "search_redirects");
    assert.match(result.fix ?? "", /redirects \(HTTP 302\) to https:\/\/search\.example\.test\/search: set search\.endpoint/);
    assert.ok(!(result.fix ?? "").includes("leaky"));
    assert.equal(search.requests.length, before + 1);
  });

  test("explains a 429 as SearXNG's limiter", async () => {
    search.respondWith({ kind: "rate_limited" });
    const result = await probe("search", endpoint());
    assert.equal(result.code, "search_rate_limited");
    assert.match(result.fix ?? "", /server\.limiter/);
  });

  test("rejects a body that is not SearXNG JSON", async () => {
    search.respondWith({ kind: "malformed" });
    const result = await probe("search", endpoint());
    assert.equal(result.code, "search_malformed_response");
  });

  test("reports its own deadline when SearXNG never answers", async () => {
    search.respondWith({ kind: "slow" });
    const result = await probe("search", endpoint(), { timeoutMs: 300 });
    assert.equal(result.code, "search_timeout");
    assert.match(result.fix ?? "", /did not answer within 0\.3 s/);
  });

  test("says SearXNG cannot be reached when nothing listens", async () => {
    const url = await closedPortUrl();
    const result = await probe("search", { search: { endpoint: `${url}/search` } });
    assert.equal(result.code, "search_unreachable");
  });
});

describe("runPreflight", () => {
  test("reports every probe as cancelled, without contacting anything, when the caller has aborted", async () => {
    const { config } = writeTestConfig({ matrix: { homeserver_url: hs.url }, llm: { base_url: llm.url }, search: { endpoint: search.endpoint } });
    const counts = [hs.requests().length, llm.requests.length, search.requests.length];
    const results = await runPreflight(config, { signal: AbortSignal.abort() });
    assert.deepEqual(results.map((r) => `${r.name}:${r.code}`), [
      "matrix:check_cancelled", "llm:check_cancelled", "search:check_cancelled", "pandoc:check_cancelled", "database:check_cancelled",
    ]);
    assert.deepEqual([hs.requests().length, llm.requests.length, search.requests.length], counts);
  });

  test("runs only the requested probes, in the fixed order", async () => {
    const { config } = writeTestConfig({ search: { endpoint: search.endpoint } });
    search.respondWith({ kind: "results", results: [] });
    const results = await runPreflight(config, { only: ["database", "search"] });
    assert.deepEqual(results.map((r) => [r.name, r.ok]), [["search", true], ["database", true]]);
  });
});
