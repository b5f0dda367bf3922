// One black-box smoke of the protocol with `serve` running under Deno 2.9
// (the production runtime): hello, an idempotent create, snapshot and a
// subscription event, through the SDK client.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ControllerClient } from "../../src/client.ts";
import { startServe } from "../support/serve-process.ts";
import { SERVE_TOKENS, tokenValue } from "../support/serve-tokens.ts";

test("AIC-API-003a under Deno: serve speaks lapis-ai-controller/1 to the SDK client", async (t) => {
  const serve = await startServe(t, { tokens: SERVE_TOKENS, runtime: "deno" });
  const client = await ControllerClient.connect({ url: serve.url, credential: { type: "token", token: tokenValue("app-a") } });
  assert.equal(client.hello.protocol, "lapis-ai-controller/1");
  assert.match(String(client.bearer), /^lacb_/);
  const receipt = await client.createThread({ workspace: "ws-1", provider: "codex" }, "deno-1");
  assert.deepEqual(await client.command("threads.create", { workspace: "ws-1", provider: "codex" }, "deno-1"), receipt);
  const threadId = String(receipt.threadId);
  const seen: number[] = [];
  await client.subscribe(threadId, { event: (d) => seen.push(d.seq) }, 0);
  const deadline = Date.now() + 5000;
  while (seen.length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(seen, [1]);
  const snap = (await client.call("threads.snapshot", { threadId })) as { lastSeq: number; application: string };
  assert.equal(snap.lastSeq, 1);
  assert.equal(snap.application, "notes");
  client.close();
  assert.equal(await serve.stop(), 0);
});
