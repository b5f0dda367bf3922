import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { err, ok } from "../../../src/errors.ts";
import { MatrixError } from "../../../src/matrix/errors.ts";
import { abortableSleep, resolveRetryPolicy, RETRY_LIMITS, retryDelayMs, withRetry } from "../../../src/matrix/retry.ts";
import { authReply, authScript, ev, makeClient, ROOM, startServer, v3, type Reply } from "./harness.ts";

function failure(code: string, retryable: boolean, retryAfterMs: number | null = null): MatrixError {
  return new MatrixError(code, { errcode: null, httpStatus: null, retryAfterMs }, retryable);
}

function activeTimeouts(): number {
  return process.getActiveResourcesInfo().filter((name) => name === "Timeout").length;
}

const fast = { baseDelayMs: 1, maxDelayMs: 5, jitterRatio: 0 } as const;

describe("retry policy", () => {
  test("clamps options to their hard ceilings", () => {
    const policy = resolveRetryPolicy({ maxRetries: 1_000, baseDelayMs: 1e9, maxDelayMs: 1e9, maxRetryAfterMs: 1e9, jitterRatio: 7 });
    assert.equal(policy.maxRetries, RETRY_LIMITS.maxRetries.max);
    assert.equal(policy.baseDelayMs, RETRY_LIMITS.baseDelayMs.max);
    assert.equal(policy.maxDelayMs, RETRY_LIMITS.maxDelayMs.max);
    assert.equal(policy.maxRetryAfterMs, RETRY_LIMITS.maxRetryAfterMs.max);
    assert.equal(policy.jitterRatio, RETRY_LIMITS.jitterRatio.max);
    assert.equal(resolveRetryPolicy({ maxRetries: -3 }).maxRetries, 0);
  });

  test("rate limits wait the server's hint plus jitter, capped", () => {
    const policy = resolveRetryPolicy({ baseDelayMs: 100, maxRetryAfterMs: 5_000, jitterRatio: 0.5, random: () => 0.5 });
    assert.equal(retryDelayMs(policy, failure("matrix_rate_limited", true, 1_200), 0), 1_225);
    assert.equal(retryDelayMs(policy, failure("matrix_rate_limited", true, 99_000), 0), 5_025);
  });

  test("network and server errors back off exponentially up to the cap", () => {
    const policy = resolveRetryPolicy({ maxRetries: 10, baseDelayMs: 100, maxDelayMs: 1_000, jitterRatio: 0 });
    const delays = [0, 1, 2, 3, 4, 5].map((attempt) => retryDelayMs(policy, failure("matrix_network", true), attempt));
    assert.deepEqual(delays, [100, 200, 400, 800, 1_000, 1_000]);
  });

  test("never retries ordinary failures or beyond the retry count", () => {
    const policy = resolveRetryPolicy({ maxRetries: 2 });
    assert.equal(retryDelayMs(policy, failure("matrix_forbidden", false), 0), null);
    assert.equal(retryDelayMs(policy, failure("matrix_server_error", true), 2), null);
  });

  test("withRetry stops at the first non-retryable failure", async () => {
    let calls = 0;
    const result = await withRetry(resolveRetryPolicy(fast), new AbortController().signal, async () => {
      calls += 1;
      return err(failure(calls === 1 ? "matrix_server_error" : "matrix_not_found", calls === 1));
    });
    assert.equal(calls, 2);
    assert.equal(!result.ok && result.error.code, "matrix_not_found");
  });

  test("an abort during the backoff sleep ends the wait at once and clears its timer", async () => {
    const controller = new AbortController();
    const before = activeTimeouts();
    let calls = 0;
    const pending = withRetry(resolveRetryPolicy({ baseDelayMs: 60_000, jitterRatio: 0 }), controller.signal, async () => {
      calls += 1;
      return err(failure("matrix_network", true));
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(activeTimeouts(), before + 1);
    controller.abort();
    const result = await pending;
    assert.equal(calls, 1);
    assert.equal(!result.ok && result.error.code, "matrix_aborted");
    assert.equal(activeTimeouts(), before);
  });

  test("abortableSleep resolves true after a full wait and false when already aborted", async () => {
    assert.equal(await abortableSleep(1, new AbortController().signal), true);
    const aborted = new AbortController();
    aborted.abort();
    assert.equal(await abortableSleep(60_000, aborted.signal), false);
  });

  test("withRetry returns the first success", async () => {
    const result = await withRetry(resolveRetryPolicy(fast), new AbortController().signal, async () => ok(7));
    assert.deepEqual(result, ok(7));
  });
});

/** A server that logs in normally unless `reply` (given the per-route request count) scripts the request. */
async function scripted(reply: (pathname: string, method: string, count: number) => Reply | null) {
  const auth = authScript(false);
  const counts = new Map<string, number>();
  return startServer((request) => {
    const key = `${request.method} ${request.pathname}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    return reply(request.pathname, request.method, counts.get(key) ?? 0) ?? authReply(auth, request) ?? { status: 404, json: { errcode: "M_UNRECOGNIZED" } };
  });
}

const limited = (ms: number): Reply => ({ status: 429, json: { errcode: "M_LIMIT_EXCEEDED", error: "Too many requests", retry_after_ms: ms } });
const syncOk: Reply = { status: 200, json: { next_batch: "s1", rooms: { join: { [ROOM]: { timeline: { events: [ev("$1")] } } } } } };

describe("retries inside the client", () => {
  test("sync honours 429 retry_after_ms and then succeeds", async (t) => {
    const server = await scripted((path, _m, n) => (path === v3("/sync") ? (n <= 2 ? limited(2) : syncOk) : null));
    const { client, lines } = makeClient(server.url);
    t.after(async () => { await client.close(); await server.close(); });
    const result = await client.sync({ since: "s0", timeoutMs: 0, roomIds: [ROOM], timelineLimit: 10, signal: new AbortController().signal });
    assert.ok(result.ok);
    assert.equal(server.hits("/sync").length, 3);
    const retries = lines.filter((line) => line.includes("matrix_request_retry"));
    assert.equal(retries.length, 2);
    assert.match(retries[0] ?? "", /"delay_ms":2\b/);
  });

  test("send honours 429 and retries with the same transaction id", async (t) => {
    const server = await scripted((path, _m, n) => (path.includes("/send/") ? (n === 1 ? limited(1) : { status: 200, json: { event_id: "$sent" } }) : null));
    const { client } = makeClient(server.url);
    t.after(async () => { await client.close(); await server.close(); });
    const result = await client.sendMessage(ROOM, "txn-1", { msgtype: "m.text", body: "x" }, new AbortController().signal);
    assert.deepEqual(result, ok("$sent"));
    const sends = server.requests.filter((r) => r.pathname.includes("/send/"));
    assert.equal(sends.length, 2);
    assert.deepEqual(sends.map((r) => r.pathname.split("/").at(-1)), ["txn-1", "txn-1"]);
  });

  test("login honours 429 and then logs in", async (t) => {
    const server = await scripted((path, method, n) => (path === v3("/login") && method === "POST" && n === 1 ? limited(1) : null));
    const { client } = makeClient(server.url);
    t.after(async () => { await client.close(); await server.close(); });
    const result = await client.login(new AbortController().signal);
    assert.ok(result.ok);
    assert.equal(server.hits("/login", "POST").length, 2);
    assert.equal(client.authStats().passwordLogins, 1);
  });

  test("5xx responses back off and then succeed", async (t) => {
    const server = await scripted((path, _m, n) => (path.includes("/event/") ? (n <= 2 ? { status: 503, text: "busy" } : { status: 200, json: ev("$e") }) : null));
    const { client } = makeClient(server.url);
    t.after(async () => { await client.close(); await server.close(); });
    const result = await client.event(ROOM, "$e", new AbortController().signal);
    assert.ok(result.ok);
    assert.equal(server.requests.filter((r) => r.pathname.includes("/event/")).length, 3);
  });

  test("5xx responses stop after the configured retries with a retryable error", async (t) => {
    const server = await scripted((path) => (path.includes("/event/") ? { status: 500, json: { errcode: "M_UNKNOWN" } } : null));
    const { client } = makeClient(server.url, { retry: { maxRetries: 2 } });
    t.after(async () => { await client.close(); await server.close(); });
    const result = await client.event(ROOM, "$e", new AbortController().signal);
    assert.equal(!result.ok && result.error.code, "matrix_server_error");
    assert.equal(!result.ok && result.error.retryable, true);
    assert.equal(server.requests.filter((r) => r.pathname.includes("/event/")).length, 3);
  });

  for (const [status, errcode, code] of [[400, "M_BAD_JSON", "matrix_request_failed"], [403, "M_FORBIDDEN", "matrix_forbidden"],
    [404, "M_NOT_FOUND", "matrix_not_found"], [400, "M_UNKNOWN_POS", "matrix_unknown_pos"]] as const) {
    test(`an ordinary ${status} ${errcode} is not retried`, async (t) => {
      const server = await scripted((path) => (path === v3("/sync") || path.includes("/send/") ? { status, json: { errcode } } : null));
      const { client } = makeClient(server.url);
      t.after(async () => { await client.close(); await server.close(); });
      const signal = new AbortController().signal;
      const sync = await client.sync({ since: "s0", timeoutMs: 0, roomIds: [ROOM], timelineLimit: 5, signal });
      const send = await client.sendMessage(ROOM, "t1", { body: "x" }, signal);
      assert.equal(!sync.ok && sync.error.code, code);
      assert.equal(!send.ok && send.error.code, code);
      assert.equal(server.hits("/sync").length, 1);
      assert.equal(server.requests.filter((r) => r.pathname.includes("/send/")).length, 1);
    });
  }

  test("an abort while waiting out a rate limit cancels the wait and clears the timer", async (t) => {
    const server = await scripted((path) => (path === v3("/sync") ? limited(60_000) : null));
    const { client } = makeClient(server.url);
    t.after(async () => { await client.close(); await server.close(); });
    await client.login(new AbortController().signal);
    const before = activeTimeouts();
    const controller = new AbortController();
    const pending = client.sync({ since: "s0", timeoutMs: 0, roomIds: [ROOM], timelineLimit: 5, signal: controller.signal });
    while (server.hits("/sync").length === 0) await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort();
    const result = await pending;
    assert.equal(!result.ok && result.error.code, "matrix_aborted");
    assert.equal(server.hits("/sync").length, 1);
    assert.equal(activeTimeouts(), before);
  });
});
