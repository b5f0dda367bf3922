// Black-box against a running `serve` (Node): hello, AuthSessions, scopes,
// reconnect. AIC-API-003a-d, P-API-01/03/04/06/12.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ControllerClient } from "../../src/client.ts";
import { INITIAL_SCOPES, SCOPE_MAP } from "../../src/auth/scopes.ts";
import { DISPATCH } from "../../src/transport/dispatch.ts";
import { PROTOCOL } from "../../src/transport/frames.ts";
import type { ServeProcess } from "../support/serve-process.ts";
import { startServe } from "../support/serve-process.ts";
import { SERVE_TOKENS, tokenValue } from "../support/serve-tokens.ts";
import { startTcpProxy } from "../support/tcp-proxy.ts";
import { errorCode, RawClient, resultOf } from "../support/raw-client.ts";

async function hello(url: string, credential: Record<string, unknown>, protocol = PROTOCOL) {
  const client = await RawClient.open(url);
  return { client, reply: await client.request("hello", { protocol, credential }) };
}

const token = (id: string) => ({ type: "token", token: tokenValue(id) });

test("serve: hello and AuthSessions, black-box", async (t) => {
  // The default session TTL: a session here must not expire while a loaded
  // machine works through a subtest. Expiry has its own serve below.
  const serve: ServeProcess = await startServe(t, { tokens: SERVE_TOKENS });

  await t.test("P-API-01 protocol lapis-ai-controller/9 with a wrong token answers protocol_unsupported", async () => {
    const { client, reply } = await hello(serve.url, { type: "token", token: "wrong-wrong-wrong-wrong" }, "lapis-ai-controller/9");
    assert.equal(errorCode(reply), "protocol_unsupported");
    assert.equal(await client.closed(), 4426);
  });

  await t.test("AIC-API-003a a bootstrap token issues or resumes one AuthSession; a bearer only when new", async () => {
    const first = await hello(serve.url, token("app-b"));
    const r1 = resultOf<{ authSessionId: string; bearer?: string; protocol: string }>(first.reply);
    assert.equal(r1.protocol, "lapis-ai-controller/1");
    assert.match(String(r1.bearer), /^lacb_/);
    const second = await hello(serve.url, token("app-b"));
    const r2 = resultOf<{ authSessionId: string; bearer?: string }>(second.reply);
    assert.equal(r2.authSessionId, r1.authSessionId);
    assert.equal(r2.bearer, undefined);
    first.client.close();
    second.client.close();
  });

  await t.test("AIC-API-003b a revoked bearer fails closed and closes the socket", async () => {
    const first = await hello(serve.url, token("bob"));
    const { bearer } = resultOf<{ bearer: string }>(first.reply);
    resultOf(await first.client.request("auth.revoke", {}));
    assert.equal(await first.client.closed(), 4401);
    const again = await hello(serve.url, { type: "bearer", bearer });
    assert.equal(errorCode(again.reply), "unauthorized");
    assert.equal(await again.client.closed(), 4401);
  });

  await t.test("AIC-API-003b an expired bearer fails closed (TTL 1 s configured)", async (st) => {
    const expiring = await startServe(st, { tokens: SERVE_TOKENS, limits: { sessionTtlMs: 1000 } });
    const first = await hello(expiring.url, token("owner"));
    const { bearer } = resultOf<{ bearer: string }>(first.reply);
    await new Promise((r) => setTimeout(r, 1200));
    assert.equal(errorCode(await first.client.request("threads.snapshot", { threadId: "x" })), "unauthorized");
    assert.equal(await first.client.closed(), 4401);
    const again = await hello(expiring.url, { type: "bearer", bearer });
    assert.equal(errorCode(again.reply), "unauthorized");
  });

  await t.test("AIC-API-003c a session missing a method's scope gets forbidden, for every dispatched method", async () => {
    for (const method of Object.keys(DISPATCH)) {
      const scope = SCOPE_MAP[method] as string;
      const { client } = await hello(serve.url, token(`no-${scope.replace(":", "-")}`));
      const reply = await client.request(method, {});
      assert.equal(errorCode(reply), "forbidden", method);
      client.close();
    }
  });

  await t.test("P-API-04 a token configured without scopes gets the full initial set", async () => {
    const { client, reply } = await hello(serve.url, token("app-a"));
    assert.deepEqual(resultOf<{ scopes: string[] }>(reply).scopes, [...INITIAL_SCOPES]);
    client.close();
  });

  await t.test("P-API-06 a threads:read session may replay and subscribe, never submit", async () => {
    const writer = await hello(serve.url, token("app-a"));
    const { threadId } = resultOf<{ threadId: string }>(
      await writer.client.request("threads.create", { commandId: "p6", workspace: "ws", provider: "codex" }));
    const reader = await hello(serve.url, token("reader"));
    resultOf(await reader.client.request("threads.replay", { threadId }));
    resultOf(await reader.client.request("threads.subscribe", { threadId, afterSeq: 0 }));
    assert.equal(errorCode(await reader.client.request("turns.submit", { commandId: "s", threadId, input: "x" })), "forbidden");
    writer.client.close();
    reader.client.close();
  });

  await t.test("P-API-12 a ?token= in the URL is ignored; hello is still required", async () => {
    const client = await RawClient.open(`${serve.url}/?token=${tokenValue("app-a")}`);
    assert.equal(errorCode(await client.request("threads.replay", { threadId: "x" })), "hello_required");
    assert.equal(await client.closed(), 4400);
  });

  await t.test("AIC-API-003d reconnect keeps the AuthSession and never resubmits a mutation", async () => {
    const proxy = await startTcpProxy(new URL(serve.url).port === "" ? 80 : Number(new URL(serve.url).port));
    t.after(() => proxy.close());
    const client = await ControllerClient.connect({ url: proxy.url, credential: token("app-a") as never, reconnectDelayMs: 20 });
    const before = client.authSessionId;
    const pending = client.createThread({ workspace: "ws", provider: "codex" }, "cmd-003d");
    proxy.cut();
    const receipt = await pending;
    assert.equal(client.authSessionId, before);
    assert.ok(proxy.accepted >= 2, "the client reconnected");
    const again = await client.command("threads.create", { workspace: "ws", provider: "codex" }, "cmd-003d");
    assert.deepEqual(again, receipt);
    const accepted = serve.stderr().split("\n").filter((l) => l.includes('"command.accepted"') && l.includes('"method":"threads.create"') && l.includes('"created":true'));
    // One creation for p6 above, one for cmd-003d.
    assert.equal(accepted.length, 2);
    client.close();
  });
});
