// P-DNO-01 (the Node half; the Deno lane runs the same check): the SDK's
// default socket hands the controller each frame in one read, so an answer of
// a few KiB (a recall's candidates) never waits for a delayed ACK; and the
// factory seam (a factory that loads its socket first) keeps its deadline.
import assert from "node:assert/strict";
import { test } from "node:test";
import { nodeNetSocket, RpcPeer, runsOnDeno, type SocketLike } from "../../../src/transport/ws-client.ts";
import { readsPerLargeAnswer } from "../../support/frame-reads-check.ts";
import { startFrameReadServer } from "../../support/frame-reads.ts";

// This file also runs under `deno test`: the runtime is told by the `Deno` global, not by the user agent runsOnDeno reads.
const onDeno = typeof (globalThis as { Deno?: unknown }).Deno === "object";

test("P-DNO-01 the default socket (WebSocket on Node, node:net under Deno) delivers each 4 KiB answer in one read", async () => {
  assert.equal(runsOnDeno(), onDeno);
  assert.deepEqual(await readsPerLargeAnswer(5), [1, 1, 1, 1, 1]);
});

test("P-DNO-01 runsOnDeno reads the user agent: Deno yes, Node and browsers no", () => {
  assert.equal(runsOnDeno("Deno/2.9.6"), true);
  assert.equal(runsOnDeno("Node.js/24"), false);
  assert.equal(runsOnDeno("Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/140.0"), false);
  // No argument (undefined) reads this runtime's own user agent; a runtime with none (null here) is not Deno.
  assert.equal(runsOnDeno(undefined), onDeno);
  assert.equal(runsOnDeno(null), false);
});

test("P-DNO-01 a factory that loads its socket first: opened, refused, or past the deadline (and then closed)", async () => {
  const server = await startFrameReadServer();
  try {
    const loaded = await RpcPeer.open(server.url, (url) => Promise.resolve(new WebSocket(url) as unknown as SocketLike), {}, 5_000);
    assert.ok(loaded instanceof RpcPeer);
    loaded.close();
    assert.deepEqual(await RpcPeer.open(server.url, () => Promise.reject(new Error("no module")), {}, 5_000), { code: "connect_failed", retryable: true });
    let closed = 0;
    let release: (socket: SocketLike) => void = () => {};
    const late: SocketLike = { readyState: 0, send() {}, close() { closed += 1; }, addEventListener() {} };
    const pending = RpcPeer.open(server.url, () => new Promise<SocketLike>((resolve) => { release = resolve; }), {}, 20);
    assert.deepEqual(await pending, { code: "connect_timeout", retryable: true });
    release(late);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(closed, 1, "a socket that arrives after the deadline is closed");
  } finally {
    await server.close();
  }
});

test("P-DNO-01 where `ws` cannot be loaded, the Deno socket falls back to the runtime's WebSocket and still connects and answers", async () => {
  const server = await startFrameReadServer();
  try {
    let loads = 0;
    const failing = () => { loads += 1; return Promise.reject(new TypeError('Import "ws" not a dependency')); };
    const peer = await RpcPeer.open(server.url, (url) => nodeNetSocket(url, failing), { request: () => Promise.resolve({ ok: true, value: { text: "ok" }, raw: "" }) }, 5_000);
    assert.ok(peer instanceof RpcPeer, JSON.stringify(peer));
    const answer = await server.ask(JSON.stringify({ jsonrpc: "2.0", id: "s1", method: "memory.recall", params: {} }));
    assert.equal((JSON.parse(answer.text) as { result: { text: string } }).result.text, "ok");
    assert.equal(loads, 1);
    peer.close();
  } finally {
    await server.close();
  }
});
