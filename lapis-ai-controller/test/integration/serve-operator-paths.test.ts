// Black-box over raw WebSockets against a running `serve` (issue 25 point 9):
// D4 every dispatched method refuses an unknown param; D7 every value the
// service returns is accepted back where the protocol takes it (the binding
// and config exactly as threads.snapshot returns them, after a restart);
// D8 the listener refuses a foreign Host (DNS rebinding) and any Origin not
// in `listen.allowedOrigins`, before the upgrade.
import assert from "node:assert/strict";
import { test } from "node:test";
import { SCOPE_MAP } from "../../src/auth/scopes.ts";
import { PROTOCOL } from "../../src/transport/frames.ts";
import { ENGINE_TOKENS, engineServe } from "../support/engine-serve.ts";
import { errorCode, RawClient, resultOf } from "../support/raw-client.ts";
import { rawUpgrade } from "../support/raw-upgrade.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { startServe } from "../support/serve-process.ts";
import { tempDir } from "../support/temp.ts";

const ALICE = ENGINE_TOKENS[0].value;

async function session(url: string): Promise<RawClient> {
  const client = await RawClient.open(url);
  resultOf(await client.request("hello", { protocol: PROTOCOL, credential: { type: "token", token: ALICE } }));
  return client;
}

test("AIC-OPER-04 AIC-OPER-07 every method refuses unknown params; a snapshot's binding and config are accepted back after a restart", async (t) => {
  const dir = tempDir(t, "aic-opaths-");
  const agent = scriptedAgent({ steps: [{ say: "ok" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 1);
  await serve.start();
  let c = await session(serve.url);

  // D4: the engine's methods are dispatched here too, so the walk covers the whole SCOPE_MAP.
  const methods = Object.keys(SCOPE_MAP).filter((m) => m !== "hello");
  assert.ok(methods.includes("threads.reserve") && methods.includes("turns.resolve"));
  for (const method of methods) {
    const reply = await c.request(method, { zzUnknownKey: 1 });
    assert.equal(errorCode(reply), "invalid_params", `${method} refuses an unknown key`);
  }
  assert.equal(c.closeCode, null, "refusals keep the session");

  const created = resultOf<{ threadId: string }>(await c.request("threads.create", { commandId: "c-1", workspace: "ws-1", provider: "scripted" }));
  const threadId = created.threadId;
  c.close();
  await serve.kill("SIGTERM");
  await serve.start();
  c = await session(serve.url);
  const snap = resultOf<{ binding: Record<string, unknown>; config: Record<string, unknown>; configVersion: number }>(await c.request("threads.snapshot", { threadId }));
  assert.equal(snap.binding.applicationRef, null, "the snapshot carries applicationRef: null");
  assert.equal(snap.config.title, null);
  // Until attached, submit answers attachment_required; the binding exactly as returned attaches.
  assert.equal(errorCode(await c.request("turns.submit", { commandId: "s-0", threadId, input: { text: "x" } })), "attachment_required");
  const attached = resultOf<{ threadId: string }>(await c.request("threads.attach", { threadId, binding: snap.binding }));
  assert.equal(attached.threadId, threadId);
  const configured = resultOf<{ configVersion: number }>(await c.request("threads.configure", { commandId: "cfg-1", threadId, expectedVersion: snap.configVersion, config: snap.config }));
  assert.equal(configured.configVersion, snap.configVersion + 1);
  const again = resultOf<{ config: Record<string, unknown> }>(await c.request("threads.snapshot", { threadId }));
  assert.deepEqual(again.config, snap.config, "a config sent back unchanged changes nothing");
  c.close();
});

test("AIC-OPER-08 the listener refuses a foreign Host and any Origin not allowlisted; a listed origin and loopback hosts pass", async (t) => {
  const allowed = "http://app.localhost:5173";
  const serve = await startServe(t, { tokens: [{ id: "owner", envName: "AIC_T_OPS_OWNER", value: "CANARYtok-ops-owner-4b7e1d9c3a5f2086" }], listen: { allowedOrigins: [allowed] } });
  const port = Number(new URL(serve.url).port);
  const hello = { jsonrpc: "2.0", id: "h", method: "hello", params: { protocol: PROTOCOL, credential: { type: "token", token: "CANARYtok-ops-owner-4b7e1d9c3a5f2086" } } };

  for (const host of [`evil.example:${port}`, "127.0.0.1", `127.0.0.1:${port + 1}`, `localhost.evil.example:${port}`, ""]) {
    const r = await rawUpgrade(port, host === "" ? {} : { Host: host });
    assert.equal(r.status, 403, `Host ${JSON.stringify(host)} refused`);
    r.close();
  }
  for (const origin of ["http://evil.example", "null", `http://127.0.0.1:${port}`, "http://app.localhost:5174"]) {
    const r = await rawUpgrade(port, { Host: `127.0.0.1:${port}`, Origin: origin });
    assert.equal(r.status, 403, `Origin ${origin} refused`);
    r.close();
  }
  const passing: Record<string, string>[] = [{ Host: `127.0.0.1:${port}` }, { Host: `localhost:${port}` }, { Host: `[::1]:${port}` }, { Host: `127.0.0.1:${port}`, Origin: allowed }];
  for (const headers of passing) {
    const r = await rawUpgrade(port, headers);
    assert.equal(r.status, 101, JSON.stringify(headers));
    const reply = await r.request(hello);
    assert.equal((reply.result as { protocol?: string } | undefined)?.protocol, PROTOCOL, `hello accepted with ${JSON.stringify(headers)}`);
    r.close();
  }
  assert.match(serve.stderr(), /"event":"connection\.refused","code":"host_forbidden"/);
  assert.match(serve.stderr(), /"event":"connection\.refused","code":"origin_forbidden"/);
  assert.ok(!serve.stderr().includes("evil.example"), "refusals log codes, never header values");
});
