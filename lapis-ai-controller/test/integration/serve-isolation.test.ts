// Black-box against a running `serve` (Node): isolation, commands, bindings,
// snapshots and the SDK's reconnect stream. AIC-API-004a/b, P-API-07,
// P-API-14/15, P-SDK-03, P-SDK-16, P-ARC-16, P-TRN-28.
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import type { ThreadEventDelivery } from "../../src/client.ts";
import { ControllerClient } from "../../src/client.ts";
import { PROTOCOL } from "../../src/transport/frames.ts";
import { startServe } from "../support/serve-process.ts";
import { SERVE_TOKENS, tokenValue } from "../support/serve-tokens.ts";
import { startTcpProxy } from "../support/tcp-proxy.ts";
import { errorCode, RawClient, rawResultText, resultOf } from "../support/raw-client.ts";

const token = (id: string) => ({ type: "token" as const, token: tokenValue(id) });
const CREATE = { workspace: "ws-1", provider: "codex" };

async function session(url: string, id: string): Promise<RawClient> {
  const client = await RawClient.open(url);
  resultOf(await client.request("hello", { protocol: PROTOCOL, credential: token(id) }));
  return client;
}

test("serve: isolation, commands and bindings, black-box", async (t) => {
  const serve = await startServe(t, { tokens: SERVE_TOKENS, limits: { snapshotTailLimit: 20 } });
  const a = await session(serve.url, "app-a");
  t.after(() => a.close());
  const binding = { toolEndpoints: ["tools-1"], contextSources: ["notes"], restricted: false, retention: "full", applicationRef: "vault-1" };
  const created = await a.request("threads.create", { commandId: "create-1", ...CREATE, binding });
  const { threadId } = resultOf<{ threadId: string }>(created);

  await t.test("P-API-07 the same commandId twice gives a byte-identical receipt; other input command_conflict", async () => {
    const again = await a.request("threads.create", { commandId: "create-1", ...CREATE, binding });
    assert.equal(rawResultText(again), rawResultText(created));
    assert.equal(rawResultText(await a.request("commands.get", { commandId: "create-1" })), rawResultText(created));
    assert.equal(errorCode(await a.request("threads.create", { commandId: "create-1", ...CREATE })), "command_conflict");
  });

  await t.test("AIC-API-004a the thread's application is stamped from the session", () => {
    const db = new DatabaseSync(serve.databasePath, { readOnly: true });
    const row = db.prepare("SELECT principal, application FROM threads WHERE thread_id = ?").get(threadId);
    db.close();
    assert.deepEqual({ ...row }, { principal: "alice", application: "notes" });
  });

  await t.test("AIC-API-004b another principal or application cannot read the thread, its replay or subscription", async () => {
    for (const other of ["app-b", "bob"]) {
      const c = await session(serve.url, other);
      for (const method of ["threads.snapshot", "threads.replay", "threads.subscribe"]) {
        assert.equal(errorCode(await c.request(method, { threadId })), "not_found", `${other} ${method}`);
      }
      c.close();
    }
  });

  await t.test("AIC-API-004b P-LIF-03 another principal or application cannot list, delete or read the usage of the thread", async () => {
    for (const other of ["app-b", "bob"]) {
      const c = await session(serve.url, other);
      assert.deepEqual(resultOf<{ threads: unknown[] }>(await c.request("threads.list", { threadIds: [threadId] })).threads, [], `${other} threads.list`);
      assert.ok(!resultOf<{ threads: { threadId: string }[] }>(await c.request("threads.list", {})).threads.some((r) => r.threadId === threadId));
      assert.equal(errorCode(await c.request("usage.get", { threadId })), "not_found", `${other} usage.get`);
      assert.equal(errorCode(await c.request("threads.delete", { commandId: `del-${other}`, threadId })), "not_found", `${other} threads.delete`);
      c.close();
    }
    assert.deepEqual(resultOf<{ threads: { threadId: string }[] }>(await a.request("threads.list", { threadIds: [threadId] })).threads.map((r) => r.threadId), [threadId], "the owner still has it");
  });

  await t.test("P-API-14/15 a mismatched reattachment fails binding_mismatch and its later submit is refused", async () => {
    const variants: Record<string, unknown>[] = [
      { ...binding, restricted: true },
      { ...binding, toolEndpoints: ["tools-2"] },
      { ...binding, retention: "metadata-only" },
      { ...binding, applicationRef: "vault-2" },
      { ...binding, contextSources: [] },
    ];
    for (const variant of variants) {
      const c = await session(serve.url, "app-a");
      assert.equal(errorCode(await c.request("threads.attach", { threadId, binding: variant })), "binding_mismatch");
      assert.equal(errorCode(await c.request("turns.submit", { commandId: `s-${Math.random()}`, threadId, input: "hi" })), "binding_mismatch");
      c.close();
    }
    const good = await session(serve.url, "app-a");
    resultOf(await good.request("threads.attach", { threadId, binding }));
    // A matching attachment passes the binding check; the engine boundary is what answers next.
    assert.equal(errorCode(await good.request("turns.submit", { commandId: "s-ok", threadId, input: "hi" })), "turns_unavailable");
    good.close();
  });

  await t.test("P-API-03 workspace checks run on every call: a session narrowed to ws-1 cannot use ws-2", async () => {
    const narrow = await session(serve.url, "ws-narrow");
    resultOf(await narrow.request("threads.snapshot", { threadId }));
    assert.equal(errorCode(await narrow.request("threads.create", { commandId: "n-1", workspace: "ws-2", provider: "codex" })), "forbidden");
    const { threadId: ws2 } = resultOf<{ threadId: string }>(await a.request("threads.create", { commandId: "ws2", workspace: "ws-2", provider: "codex" }));
    assert.equal(errorCode(await narrow.request("threads.snapshot", { threadId: ws2 })), "forbidden");
    assert.ok(!resultOf<{ threads: { threadId: string }[] }>(await narrow.request("threads.list", {})).threads.some((r) => r.threadId === ws2), "threads.list keeps to the session's workspaces");
    assert.equal(errorCode(await narrow.request("threads.delete", { commandId: "n-del", threadId: ws2 })), "forbidden");
    narrow.close();
  });

  await t.test("P-TRN-27 a stale configuration version answers version_conflict", async () => {
    resultOf(await a.request("threads.configure", { commandId: "v-1", threadId, expectedVersion: 1, config: { approvalPolicy: "allow-all" } }));
    assert.equal(errorCode(await a.request("threads.configure", { commandId: "v-2", threadId, expectedVersion: 1, config: { title: "t" } })), "version_conflict");
  });

  await t.test("P-SDK-18 a reserved thread id carries a preparation endpoint before the thread is created", async () => {
    const { threadId: reserved } = resultOf<{ threadId: string }>(await a.request("threads.reserve", {}));
    resultOf(await a.request("endpoints.register", { endpointId: "prep-1", kind: "preparation", threadId: reserved }));
    const bob = await session(serve.url, "bob");
    assert.equal(errorCode(await bob.request("threads.create", { commandId: "steal", threadId: reserved, ...CREATE })), "not_found");
    bob.close();
    const made = resultOf<{ threadId: string }>(await a.request("threads.create", { commandId: "from-reserved", threadId: reserved, ...CREATE }));
    assert.equal(made.threadId, reserved);
  });

  await t.test("P-SDK-03 the snapshot tail is bounded and flags truncation; replay returns the complete history", async () => {
    const { threadId: busy } = resultOf<{ threadId: string }>(await a.request("threads.create", { commandId: "create-2", ...CREATE }));
    for (let v = 1; v < 100; v++) {
      resultOf(await a.request("threads.configure", { commandId: `cfg-${v}`, threadId: busy, expectedVersion: v, config: { title: `t${v}` } }));
    }
    const snap = resultOf<{ tail: { seq: number }[]; truncated: boolean; lastSeq: number }>(await a.request("threads.snapshot", { threadId: busy }));
    assert.equal(snap.lastSeq, 100);
    assert.equal(snap.tail.length, 20);
    assert.equal(snap.truncated, true);
    const replay = resultOf<{ events: { seq: number }[]; complete: boolean }>(await a.request("threads.replay", { threadId: busy }));
    assert.deepEqual(replay.events.map((e) => e.seq), Array.from({ length: 100 }, (_, i) => i + 1));
    assert.equal(replay.complete, true);
  });

  await t.test("P-ARC-16 a socket killed mid-stream: after reconnect the consumer sees every event once, in order, same session", async () => {
    const proxy = await startTcpProxy(Number(new URL(serve.url).port));
    t.after(() => proxy.close());
    const writer = await session(serve.url, "app-a");
    const { threadId: streamed } = resultOf<{ threadId: string }>(await writer.request("threads.create", { commandId: "create-3", ...CREATE }));
    const client = await ControllerClient.connect({ url: proxy.url, credential: token("app-a"), reconnectDelayMs: 20 });
    const seen: number[] = [];
    let snapshots = 0;
    await client.subscribe(streamed, { event: (d: ThreadEventDelivery) => seen.push(d.seq), snapshot: () => snapshots++ }, 0);
    const session0 = client.authSessionId;
    for (let v = 1; v <= 60; v++) {
      resultOf(await writer.request("threads.configure", { commandId: `s-${v}`, threadId: streamed, expectedVersion: v, config: { title: `x${v}` } }));
      if (v === 20 || v === 40) proxy.cut();
    }
    const deadline = Date.now() + 10_000;
    while (seen.length < 61 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(seen, Array.from({ length: 61 }, (_, i) => i + 1));
    assert.ok(snapshots >= 1, "re-snapshot after reconnect");
    assert.equal(client.authSessionId, session0);
    client.close();
    writer.close();
  });

  await t.test("P-TRN-28 a lost acknowledgement is resolved by command identity, with one accepted command", async () => {
    const proxy = await startTcpProxy(Number(new URL(serve.url).port));
    t.after(() => proxy.close());
    const client = await ControllerClient.connect({ url: proxy.url, credential: token("app-a"), reconnectDelayMs: 20 });
    const first = client.command("threads.create", CREATE, "lost-ack-1");
    proxy.cut();
    const receipt = await first;
    const raw = await a.request("commands.get", { commandId: "lost-ack-1" });
    assert.deepEqual(receipt, resultOf(raw));
    const n = serve.stderr().split("\n").filter((l) => l.includes('"command.accepted"') && l.includes('"created":true')).length;
    const db = new DatabaseSync(serve.databasePath, { readOnly: true });
    const rows = db.prepare("SELECT count(*) AS n FROM commands WHERE command_id = 'lost-ack-1'").get() as { n: number };
    db.close();
    assert.equal(Number(rows.n), 1);
    assert.ok(n >= 1);
    client.close();
  });
});

test("AIC-API-004a a retained thread row without an application reads as owner after restart", async (t) => {
  const first = await startServe(t, { tokens: SERVE_TOKENS });
  assert.equal(await first.stop(), 0);
  const db = new DatabaseSync(first.databasePath);
  db.prepare(`INSERT INTO threads (thread_id, principal, workspace_id, provider, retention, restricted, config_version,
    config, binding, created_at, updated_at) VALUES ('legacy-1', 'owner', 'ws-1', 'codex', 'full', 0, 1, '{}', '{}', 0, 0)`).run();
  db.close();
  const second = await startServe(t, { tokens: SERVE_TOKENS, dir: first.dir });
  const owner = await session(second.url, "owner");
  assert.equal(resultOf<{ application: string }>(await owner.request("threads.snapshot", { threadId: "legacy-1" })).application, "owner");
  const app = await session(second.url, "app-a");
  assert.equal(errorCode(await app.request("threads.snapshot", { threadId: "legacy-1" })), "not_found");
  owner.close();
  app.close();
});
