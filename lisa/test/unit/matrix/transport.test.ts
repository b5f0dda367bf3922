import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { MatrixTransport, type MatrixRequest } from "../../../src/matrix/transport.ts";
import { type Reply, type ScriptedServer, startServer } from "./harness.ts";

// Replies keyed by the request path, so one server serves the whole table.
const replies = new Map<string, Reply>();
let server: ScriptedServer;
const lifetime = new AbortController();
let transport: MatrixTransport;

function activeTimeouts(): number {
  return process.getActiveResourcesInfo().filter((name) => name === "Timeout").length;
}

function req(path: string, overrides: Partial<MatrixRequest> = {}): MatrixRequest {
  return { method: "GET", path, accessToken: "tok", signal: new AbortController().signal, timeoutMs: 2_000, ...overrides };
}

before(async () => {
  server = await startServer((r) => replies.get(r.pathname) ?? { status: 200, json: { path: r.pathname } });
  transport = new MatrixTransport({
    homeserverUrl: server.url, maxResponseBytes: 4_096, maxRetryAfterMs: 60_000, now: () => Date.parse("2030-01-01T00:00:00Z"),
    lifetime: lifetime.signal,
  });
});

after(async () => {
  await transport.close();
  await server.close();
});

describe("error mapping", () => {
  const table: { name: string; reply: Reply; code: string; retryable: boolean; retryAfterMs?: number | null; errcode?: string | null }[] = [
    { name: "429 with retry_after_ms", reply: { status: 429, json: { errcode: "M_LIMIT_EXCEEDED", retry_after_ms: 1500 } },
      code: "matrix_rate_limited", retryable: true, retryAfterMs: 1500, errcode: "M_LIMIT_EXCEEDED" },
    { name: "429 with a Retry-After seconds header", reply: { status: 429, text: "", headers: { "retry-after": "2" } },
      code: "matrix_rate_limited", retryable: true, retryAfterMs: 2000, errcode: null },
    { name: "429 with a Retry-After date header", reply: { status: 429, text: "", headers: { "retry-after": "Tue, 01 Jan 2030 00:00:03 GMT" } },
      code: "matrix_rate_limited", retryable: true, retryAfterMs: 3000 },
    { name: "429 with a huge hint is bounded by the ceiling", reply: { status: 429, json: { errcode: "M_LIMIT_EXCEEDED", retry_after_ms: 9e9 } },
      code: "matrix_rate_limited", retryable: true, retryAfterMs: 60_000 },
    { name: "429 without any hint", reply: { status: 429, json: {} }, code: "matrix_rate_limited", retryable: true, retryAfterMs: null },
    { name: "M_LIMIT_EXCEEDED on a 400", reply: { status: 400, json: { errcode: "M_LIMIT_EXCEEDED" } }, code: "matrix_rate_limited", retryable: true },
    { name: "500", reply: { status: 500, json: { errcode: "M_UNKNOWN" } }, code: "matrix_server_error", retryable: true },
    { name: "502 from a proxy with HTML", reply: { status: 502, text: "<html>bad gateway</html>" }, code: "matrix_server_error", retryable: true, errcode: null },
    { name: "401 M_UNKNOWN_TOKEN", reply: { status: 401, json: { errcode: "M_UNKNOWN_TOKEN", soft_logout: false } },
      code: "matrix_unknown_token", retryable: false, errcode: "M_UNKNOWN_TOKEN" },
    { name: "400 M_UNKNOWN_POS", reply: { status: 400, json: { errcode: "M_UNKNOWN_POS" } }, code: "matrix_unknown_pos", retryable: false },
    { name: "403 M_FORBIDDEN", reply: { status: 403, json: { errcode: "M_FORBIDDEN" } }, code: "matrix_forbidden", retryable: false },
    { name: "404 M_NOT_FOUND", reply: { status: 404, json: { errcode: "M_NOT_FOUND" } }, code: "matrix_not_found", retryable: false },
    { name: "400 M_BAD_JSON", reply: { status: 400, json: { errcode: "M_BAD_JSON" } }, code: "matrix_request_failed", retryable: false },
    { name: "401 M_MISSING_TOKEN", reply: { status: 401, json: { errcode: "M_MISSING_TOKEN" } }, code: "matrix_request_failed", retryable: false },
    { name: "413 without a body", reply: { status: 413, text: "" }, code: "matrix_request_failed", retryable: false },
    { name: "200 that is not JSON", reply: { status: 200, text: "<html>" }, code: "matrix_bad_response", retryable: false },
    { name: "200 larger than the cap", reply: { status: 200, text: JSON.stringify({ pad: "x".repeat(10_000) }) },
      code: "matrix_response_too_large", retryable: false },
  ];

  for (const [index, row] of table.entries()) {
    test(`maps ${row.name} to ${row.code}`, async () => {
      const path = `/_matrix/client/v3/case/${index}`;
      replies.set(path, row.reply);
      const result = await transport.request(req(path));
      assert.equal(result.ok, false);
      if (result.ok) return;
      assert.equal(result.error.code, row.code);
      assert.equal(result.error.retryable, row.retryable);
      if (row.retryAfterMs !== undefined) assert.equal(result.error.retryAfterMs, row.retryAfterMs);
      if (row.errcode !== undefined) assert.equal(result.error.errcode, row.errcode);
    });
  }

  test("keeps the soft_logout flag of a 401", async () => {
    replies.set("/_matrix/client/v3/soft", { status: 401, json: { errcode: "M_UNKNOWN_TOKEN", soft_logout: true } });
    const result = await transport.request(req("/_matrix/client/v3/soft"));
    assert.equal(!result.ok && result.error.softLogout, true);
    assert.equal(!result.ok && result.error.httpStatus, 401);
  });

  test("maps a dropped connection to a retryable matrix_network", async () => {
    replies.set("/_matrix/client/v3/drop", { destroy: true });
    const result = await transport.request(req("/_matrix/client/v3/drop"));
    assert.equal(!result.ok && result.error.code, "matrix_network");
    assert.equal(!result.ok && result.error.retryable, true);
  });
});

describe("request shape and deadlines", () => {
  test("sends the token only as a Bearer header and JSON bodies with a content type", async () => {
    const result = await transport.request(req("/_matrix/client/v3/echo", { method: "PUT", body: { a: 1 }, query: { since: "s 1" } }));
    assert.ok(result.ok);
    const seen = server.hits("/echo").at(-1);
    assert.equal(seen?.headers.authorization, "Bearer tok");
    assert.equal(seen?.headers["content-type"], "application/json");
    assert.deepEqual(seen?.body, { a: 1 });
    assert.equal(seen?.query.get("since"), "s 1");
    assert.equal(seen?.url.includes("tok"), false);
  });

  test("sends no Authorization header for unauthenticated requests", async () => {
    await transport.request(req("/_matrix/client/v3/anon", { accessToken: null }));
    assert.equal(server.hits("/anon").at(-1)?.headers.authorization, undefined);
  });

  test("a per-request deadline turns a hanging server into a retryable matrix_network and clears its timer", async () => {
    replies.set("/_matrix/client/v3/hang1", { hang: true });
    const before = activeTimeouts();
    const result = await transport.request(req("/_matrix/client/v3/hang1", { timeoutMs: 50 }));
    assert.equal(!result.ok && result.error.code, "matrix_network");
    assert.equal(activeTimeouts(), before);
  });

  test("the caller's abort ends a hanging request as matrix_aborted and clears the deadline timer", async () => {
    replies.set("/_matrix/client/v3/hang2", { hang: true });
    const before = activeTimeouts();
    const controller = new AbortController();
    const pending = transport.request(req("/_matrix/client/v3/hang2", { signal: controller.signal, timeoutMs: 60_000 }));
    await waitFor(() => server.hits("/hang2").length === 1);
    controller.abort();
    const result = await pending;
    assert.equal(!result.ok && result.error.code, "matrix_aborted");
    assert.equal(result.ok || result.error.retryable, false);
    assert.equal(activeTimeouts(), before);
  });

  test("an already aborted signal sends nothing", async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await transport.request(req("/_matrix/client/v3/never", { signal: controller.signal }));
    assert.equal(!result.ok && result.error.code, "matrix_aborted");
    assert.equal(server.hits("/never").length, 0);
  });

  test("keeps a homeserver base path", async () => {
    const prefixed = new MatrixTransport({
      homeserverUrl: `${server.url}/prefix/`, maxResponseBytes: 4_096, maxRetryAfterMs: 1_000, now: Date.now, lifetime: lifetime.signal,
    });
    await prefixed.request(req("/_matrix/client/v3/based"));
    await prefixed.close();
    assert.equal(server.hits("/based").at(-1)?.pathname, "/prefix/_matrix/client/v3/based");
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}
