// The check both runtimes' lanes run (Node's unit tests, Deno's lane): the
// SDK's default socket answers a server request with a 4 KiB result, and each
// answer reaches the server in one read, never header and payload apart.
import assert from "node:assert/strict";
import { defaultSocketFactory, RpcPeer } from "../../src/transport/ws-client.ts";
import { startFrameReadServer } from "./frame-reads.ts";

const ANSWER = "x".repeat(4096);

/** Runs `rounds` request/answer round trips; returns each answer's read count. */
export async function readsPerLargeAnswer(rounds: number): Promise<number[]> {
  const server = await startFrameReadServer();
  const peer = await RpcPeer.open(server.url, defaultSocketFactory, {
    request: () => Promise.resolve({ ok: true, value: { text: ANSWER }, raw: "" }),
  }, 10_000);
  assert.ok(peer instanceof RpcPeer, JSON.stringify(peer));
  try {
    const counts: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const answer = await server.ask(JSON.stringify({ jsonrpc: "2.0", id: `s${i}`, method: "memory.recall", params: {} }));
      assert.equal((JSON.parse(answer.text) as { result: { text: string } }).result.text, ANSWER);
      counts.push(answer.reads);
    }
    return counts;
  } finally {
    peer.close();
    await server.close();
  }
}
