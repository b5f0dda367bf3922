// Black-box against a running `serve` (Node): frame limits, malformed and
// random frames, and the token canary (never in responses, logs, the
// database, errors or argv).
import assert from "node:assert/strict";
import { readFileSync, existsSync } from "node:fs";
import { test } from "node:test";
import { PROTOCOL } from "../../src/transport/frames.ts";
import { startServe } from "../support/serve-process.ts";
import { CANARY, SERVE_TOKENS, tokenValue } from "../support/serve-tokens.ts";
import { errorCode, RawClient, resultOf } from "../support/raw-client.ts";

const token = (id: string) => ({ type: "token" as const, token: tokenValue(id) });

async function session(url: string, id: string): Promise<RawClient> {
  const client = await RawClient.open(url);
  resultOf(await client.request("hello", { protocol: PROTOCOL, credential: token(id) }));
  return client;
}

/** A deterministic pseudo-random generator, so a failing run can be replayed. */
function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x1_0000_0000;
  };
}

function randomFrame(next: () => number): string {
  const good = [
    JSON.stringify({ jsonrpc: "2.0", id: 1, method: "threads.snapshot", params: { threadId: "t" } }),
    JSON.stringify({ jsonrpc: "2.0", id: "h", method: "hello", params: { protocol: PROTOCOL, credential: token("app-a") } }),
    JSON.stringify({ jsonrpc: "2.0", id: 2, method: "threads.create", params: { commandId: "f", workspace: "w", provider: "p" } }),
    JSON.stringify({ jsonrpc: "2.0", id: 3, result: { x: 1 } }),
  ];
  const base = good[Math.floor(next() * good.length)] as string;
  switch (Math.floor(next() * 6)) {
    case 0:
      return base.slice(0, Math.floor(next() * base.length));
    case 1:
      return Array.from({ length: Math.floor(next() * 64) }, () => String.fromCharCode(Math.floor(next() * 0x2fff))).join("");
    case 2:
      return base.replace(/"[a-z]+"/, `"${"x".repeat(Math.floor(next() * 20))}"`);
    case 3:
      return JSON.stringify({ jsonrpc: "2.0", id: next() > 0.5 ? null : [1], method: next() > 0.5 ? 42 : "a.b", params: next() > 0.5 ? [] : "s" });
    case 4:
      return JSON.stringify(Array.from({ length: 3 }, () => next()));
    default:
      return base.replace(/:/g, next() > 0.5 ? "::" : ":");
  }
}

test("serve: frames, fuzzing and the token canary, black-box", async (t) => {
  const serve = await startServe(t, { tokens: SERVE_TOKENS, limits: { maxFrameBytes: 4096 } });
  const answers: string[] = [];

  await t.test("AIC-WIRE-02 malformed frames, unknown methods and oversize frames get JSON-RPC errors", async () => {
    const c = await session(serve.url, "app-a");
    c.sendText("{not json");
    await c.until(() => c.received.some((r) => errorCode(r) === "parse_error"));
    assert.equal(errorCode(await c.request("no.such_method", {})), "method_not_found");
    assert.equal(errorCode(await c.request("threads.snapshot", { threadId: 5 })), "invalid_params");
    assert.equal(errorCode(await c.request("threads.snapshot", { threadId: "t", extra: 1 })), "invalid_params");
    c.sendText(JSON.stringify({ jsonrpc: "2.0", id: "big", method: "threads.snapshot", params: { threadId: "x".repeat(5000) } }));
    await c.until(() => c.received.some((r) => errorCode(r) === "frame_too_large"));
    // The connection survives all of it.
    assert.equal(errorCode(await c.request("threads.snapshot", { threadId: "missing" })), "not_found");
    answers.push(...c.received.map((r) => r.text));
    c.close();
  });

  await t.test("AIC-WIRE-02 a frame above the hard ceiling closes only that socket", async () => {
    const c = await session(serve.url, "app-a");
    const other = await session(serve.url, "app-b");
    c.sendText("x".repeat(9 * 1024 * 1024));
    assert.equal(await c.closed(10_000), 1009);
    assert.equal(errorCode(await other.request("threads.snapshot", { threadId: "missing" })), "not_found");
    other.close();
  });

  await t.test("AIC-WIRE-03 1,200 random or truncated frames: the service still answers a good client", async () => {
    const next = rng(0x5eed1234);
    let sent = 0;
    for (let round = 0; round < 12; round++) {
      const raw = await RawClient.open(serve.url);
      const authed = round % 2 === 0;
      if (authed) resultOf(await raw.request("hello", { protocol: PROTOCOL, credential: token("app-a") }));
      for (let i = 0; i < 100; i++) {
        if (raw.closeCode !== null) break;
        raw.sendText(randomFrame(next));
        sent++;
      }
      await new Promise((r) => setTimeout(r, 50));
      answers.push(...raw.received.map((r) => r.text));
      raw.close();
    }
    assert.ok(sent >= 1000, `sent ${sent}`);
    const good = await session(serve.url, "app-b");
    const created = resultOf<{ threadId: string }>(await good.request("threads.create", { commandId: "after-fuzz", workspace: "w", provider: "p" }));
    assert.equal(resultOf<{ threadId: string }>(await good.request("threads.snapshot", { threadId: created.threadId })).threadId, created.threadId);
    answers.push(...good.received.map((r) => r.text));
    good.close();
  });

  await t.test("AIC-SEC-01 no token bytes in any response, log line, database file, error or argv", async () => {
    const cmdline = readFileSync(`/proc/${serve.pid}/cmdline`, "utf8");
    const outputs = [serve.stdout(), serve.stderr(), cmdline, serve.argv.join(" "), ...answers];
    const files = [serve.databasePath, `${serve.databasePath}-wal`].filter((p) => existsSync(p));
    assert.ok(files.length >= 1);
    for (const tk of SERVE_TOKENS) {
      for (const text of outputs) assert.ok(!text.includes(tk.value), `token ${tk.id} leaked into output`);
      for (const file of files) assert.ok(!readFileSync(file).includes(Buffer.from(tk.value)), `token ${tk.id} leaked into ${file}`);
    }
    for (const text of outputs) assert.ok(!text.includes(CANARY), "canary marker leaked");
    // Bearers are returned once to their client, and never logged or stored raw.
    for (const text of [serve.stdout(), serve.stderr()]) assert.ok(!/lacb_/.test(text), "bearer in log");
    for (const file of files) assert.ok(!readFileSync(file).includes(Buffer.from("lacb_")), "bearer stored raw");
    assert.equal(await serve.stop(), 0);
  });
});
