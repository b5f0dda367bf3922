// Hello and AuthSessions against the in-process protocol layer (real ws,
// real SQLite): P-API-01, P-API-02, AIC-API-003a/b, P-API-12.
import assert from "node:assert/strict";
import { test } from "node:test";
import { digestsEqual } from "../../src/auth/credentials.ts";
import { PROTOCOL } from "../../src/transport/frames.ts";
import { startHarness, TOKENS } from "../support/protocol-harness.ts";
import { errorCode, RawClient, resultOf } from "../support/raw-client.ts";

async function hello(url: string, credential: Record<string, unknown>, protocol = PROTOCOL) {
  const client = await RawClient.open(url);
  const reply = await client.request("hello", { protocol, credential });
  return { client, reply };
}

test("P-API-01 an unsupported protocol fails protocol_unsupported before any token comparison", async (t) => {
  let comparisons = 0;
  const h = await startHarness(t, {
    compare: (a, b) => {
      comparisons++;
      return digestsEqual(a, b);
    },
  });
  const { client, reply } = await hello(h.url, { type: "token", token: "wrong-token-wrong-token" }, "lapis-ai-controller/9");
  assert.equal(errorCode(reply), "protocol_unsupported");
  assert.equal(await client.closed(), 4426);
  assert.equal(comparisons, 0);
  const good = await hello(h.url, { type: "token", token: TOKENS.owner });
  resultOf(good.reply);
  assert.ok(comparisons > 0);
  good.client.close();
});

test("AIC-API-003a hello with a bootstrap token issues one AuthSession per credential, a bearer only when new", async (t) => {
  const h = await startHarness(t);
  const first = await hello(h.url, { type: "token", token: TOKENS.appA });
  const r1 = resultOf<{ authSessionId: string; bearer?: string; resumed: boolean; principal: string; application: string }>(first.reply);
  assert.equal(typeof r1.bearer, "string");
  assert.equal(r1.resumed, false);
  assert.equal(r1.principal, "alice");
  assert.equal(r1.application, "notes");
  const second = await hello(h.url, { type: "token", token: TOKENS.appA });
  const r2 = resultOf<{ authSessionId: string; bearer?: string; resumed: boolean }>(second.reply);
  assert.equal(r2.authSessionId, r1.authSessionId);
  assert.equal(r2.bearer, undefined);
  assert.equal(r2.resumed, true);
  const viaBearer = await hello(h.url, { type: "bearer", bearer: r1.bearer });
  assert.equal(resultOf<{ authSessionId: string }>(viaBearer.reply).authSessionId, r1.authSessionId);
  const other = await hello(h.url, { type: "token", token: TOKENS.appB });
  assert.notEqual(resultOf<{ authSessionId: string }>(other.reply).authSessionId, r1.authSessionId);
  const rows = h.store.handle.db.prepare("SELECT count(*) AS n FROM auth_sessions WHERE credential_id = 'app-a'").get() as { n: number };
  assert.equal(Number(rows.n), 1);
  for (const c of [first, second, viaBearer, other]) c.client.close();
});

test("AIC-API-003b a revoked bearer fails closed and its sockets close", async (t) => {
  const h = await startHarness(t);
  const first = await hello(h.url, { type: "token", token: TOKENS.appA });
  const { bearer, authSessionId } = resultOf<{ bearer: string; authSessionId: string }>(first.reply);
  const watcher = await hello(h.url, { type: "bearer", bearer });
  resultOf(watcher.reply);
  const revoked = await first.client.request("auth.revoke", {});
  assert.deepEqual(resultOf(revoked), { authSessionId, revoked: true });
  assert.equal(await first.client.closed(), 4401);
  assert.equal(await watcher.client.closed(), 4401);
  const again = await hello(h.url, { type: "bearer", bearer });
  assert.equal(errorCode(again.reply), "unauthorized");
  assert.equal(await again.client.closed(), 4401);
  // The bootstrap token itself still works and issues a new session with a new bearer.
  const fresh = await hello(h.url, { type: "token", token: TOKENS.appA });
  const r = resultOf<{ authSessionId: string; bearer?: string }>(fresh.reply);
  assert.notEqual(r.authSessionId, authSessionId);
  assert.equal(typeof r.bearer, "string");
  fresh.client.close();
});

test("AIC-API-003b an expired bearer fails closed (test clock past the TTL)", async (t) => {
  const h = await startHarness(t, { limits: { sessionTtlMs: 60_000 } });
  const first = await hello(h.url, { type: "token", token: TOKENS.appA });
  const { bearer } = resultOf<{ bearer: string }>(first.reply);
  h.clock.value += 60_001;
  const call = await first.client.request("threads.snapshot", { threadId: "t-1" });
  assert.equal(errorCode(call), "unauthorized");
  assert.equal(await first.client.closed(), 4401);
  const again = await hello(h.url, { type: "bearer", bearer });
  assert.equal(errorCode(again.reply), "unauthorized");
  const renewed = await hello(h.url, { type: "token", token: TOKENS.appA });
  assert.equal(typeof resultOf<{ bearer?: string }>(renewed.reply).bearer, "string");
  renewed.client.close();
});

test("P-API-12 a ?token= in the URL is ignored and hello is still required", async (t) => {
  const h = await startHarness(t);
  const client = await RawClient.open(`${h.url}/?token=${TOKENS.owner}`);
  const reply = await client.request("threads.snapshot", { threadId: "x" });
  assert.equal(errorCode(reply), "hello_required");
  assert.equal(await client.closed(), 4400);
});

test("P-API-02 hello with a wrong token or a malformed credential fails unauthorized or invalid_params", async (t) => {
  const h = await startHarness(t);
  const wrong = await hello(h.url, { type: "token", token: "not-a-configured-token-at-all" });
  assert.equal(errorCode(wrong.reply), "unauthorized");
  const malformed = await hello(h.url, { type: "ticket", ticket: "x" });
  assert.equal(errorCode(malformed.reply), "invalid_params");
  assert.ok(h.logs.every((line) => !line.includes(TOKENS.owner)));
});

test("AIC-WIRE-01 the first frame must be hello: a notification, a result or garbage first closes the socket", async (t) => {
  const h = await startHarness(t);
  for (const first of ['{"jsonrpc":"2.0","method":"event","params":{}}', '{"jsonrpc":"2.0","id":"s1","result":1}', "garbage"]) {
    const client = await RawClient.open(h.url);
    client.sendText(first);
    assert.equal(await client.closed(), 4400, first);
  }
  const late = await RawClient.open(h.url);
  const { client } = await hello(h.url, { type: "token", token: TOKENS.owner });
  assert.equal(errorCode(await client.request("hello", { protocol: PROTOCOL, credential: { type: "token", token: TOKENS.owner } })), "already_authenticated");
  client.close();
  late.close();
});

test("AIC-WIRE-01 a connection that never says hello is closed at the hello deadline", async (t) => {
  const h = await startHarness(t, { limits: { helloTimeoutMs: 200 } });
  const client = await RawClient.open(h.url);
  assert.equal(await client.closed(3000), 4400);
});

test("AIC-API-003b an idle connection of an expired session is closed by the sweep, without any call", async (t) => {
  const h = await startHarness(t, { limits: { sessionTtlMs: 60_000, sessionSweepMs: 50 } });
  const { client, reply } = await hello(h.url, { type: "token", token: TOKENS.appA });
  resultOf(reply);
  h.clock.value += 60_001;
  assert.equal(await client.closed(3000), 4401);
});
