// The SDK's reconnect under repeated drops (P-ARC-16): a socket cut again
// while the client is still restoring (hello, endpoints, attach, snapshot,
// subscribe) must not leave the client disconnected or the stream gapped.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ControllerClient } from "../../src/client.ts";
import { startHarness, TOKENS } from "../support/protocol-harness.ts";
import { startTcpProxy } from "../support/tcp-proxy.ts";
import { tool } from "../support/tool-spec.ts";

test("P-ARC-16 drops during the reconnect's restore: every event still arrives once, in order, same AuthSession", async (t) => {
  const h = await startHarness(t);
  const proxy = await startTcpProxy(Number(new URL(h.url).port));
  t.after(() => proxy.close());
  let cutsInRestore = 0;
  let armed = false;
  const client = await ControllerClient.connect({
    url: proxy.url,
    credential: { type: "token", token: TOKENS.appA },
    reconnectDelayMs: 10,
    // Called after a successful hello and before the restore: the cut lands inside the restore.
    onConnected: () => {
      if (!armed) return;
      armed = false;
      cutsInRestore++;
      proxy.cut();
    },
  });
  const session = client.authSessionId;
  const threadId = String((await client.createThread({ workspace: "ws-1", provider: "codex" })).threadId);
  await client.registerEndpoint({ endpointId: "tools-1", kind: "tools", tools: { x: tool(() => 1) } });
  const seen: number[] = [];
  await client.subscribe(threadId, { event: (d) => seen.push(d.seq) }, 0);
  const append = () => {
    const r = h.store.journal.append({ threadId, turnId: null, visibility: "transcript", kind: "activity", createdAt: 0 });
    if (r.ok) h.protocol.hub.published(threadId);
  };
  for (let round = 0; round < 5; round++) {
    for (let i = 0; i < 10; i++) append();
    armed = true;
    proxy.cut();
    const until = Date.now() + 5000;
    while (armed && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    for (let i = 0; i < 10; i++) append();
  }
  const total = 1 + 5 * 20;
  const deadline = Date.now() + 10_000;
  while (seen.length < total && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(seen, Array.from({ length: total }, (_, i) => i + 1));
  assert.equal(cutsInRestore, 5);
  assert.equal(client.authSessionId, session);
  assert.ok(h.protocol.endpoints.get({ principal: "alice", application: "notes" }, "tools-1") !== undefined, "endpoint re-registered");
  client.close();
});
