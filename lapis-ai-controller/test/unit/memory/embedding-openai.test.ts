// The OpenAI-compatible embeddings provider against the real llama-server
// (SmolLM2, mean pooling) on 127.0.0.1: vectors, batching, the API key from
// an env: reference only, payload-free failures, and group memory's hybrid
// search over it.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";
import { openAiEmbeddingProvider } from "../../../src/memory/embedding-openai.ts";
import { openGroupMemory } from "../../../src/memory/group/profile.ts";
import { openSqliteGroupDatabase } from "../../../src/memory/group/sqlite-database.ts";
import { claim, realRedactor } from "../../support/group-memory.ts";
import { startLlamaEmbeddings } from "../../support/llama-embeddings.ts";

const KEY = "llama-key-CANARY-7f3a9c21";
const DIMS = 576; // SmolLM2-135M's hidden size
const never = new AbortController().signal;

const cosine = (a: Float32Array, b: Float32Array) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += (a[i] as number) * (b[i] as number);
    na += (a[i] as number) ** 2;
    nb += (b[i] as number) ** 2;
  }
  return dot / Math.sqrt(na * nb);
};

test("P-MEM-08 the OpenAI-compatible provider embeds through the real llama-server with a key from an env: reference", { timeout: 180_000 }, async (t) => {
  const { baseUrl } = await startLlamaEmbeddings(t, KEY);
  const env = (name: string) => (name === "EMBED_KEY" ? KEY : undefined);
  const made = openAiEmbeddingProvider({ baseUrl, model: "smollm2", dims: DIMS, apiKey: "env:EMBED_KEY", env, maxBatch: 2, timeoutMs: 60_000 });
  assert.ok(made.ok);
  const provider = made.value;
  assert.equal(provider.id, "openai-compatible:smollm2:576");
  assert.equal(JSON.stringify(provider).includes(KEY), false);
  const texts = ["The cat sleeps on the sofa.", "A kitten naps on the couch.", "Quarterly tax filing deadline", "The cat sleeps on the sofa."];
  const r = await provider.embed(texts, never);
  assert.ok(r.ok);
  assert.equal(r.value.length, 4, "three requests of at most two texts, in order");
  assert.ok(r.value.every((v) => v.length === DIMS && v.every(Number.isFinite)));
  assert.ok(cosine(r.value[0] as Float32Array, r.value[3] as Float32Array) > 0.999, "the same text gives the same vector");
  // No key, a wrong key: the server refuses; the failure is a code, never the key or the text.
  for (const apiKey of [undefined, "env:WRONG_KEY"]) {
    const other = openAiEmbeddingProvider({ baseUrl, model: "smollm2", dims: DIMS, ...(apiKey ? { apiKey } : {}), env: (n) => (n === "WRONG_KEY" ? "nope-not-it" : undefined) });
    assert.ok(other.ok);
    const refused = await other.value.embed(["secret text"], never);
    assert.deepEqual(refused, { ok: false, error: { code: "embedding_failed", retryable: false } });
  }
  // A wrong dimension count is refused as a shape error.
  const wrongDims = openAiEmbeddingProvider({ baseUrl, model: "smollm2", dims: 384, apiKey: "env:EMBED_KEY", env });
  assert.ok(wrongDims.ok);
  assert.deepEqual(await wrongDims.value.embed(["hello"], never), { ok: false, error: { code: "embedding_failed", retryable: false } });

  // Group memory's hybrid search over the real embeddings.
  const opened = openGroupMemory({ db: openSqliteGroupDatabase({ path: ":memory:" }), capture: realRedactor(t), embeddings: provider });
  assert.ok(opened.ok);
  const m = opened.value;
  t.after(() => m.close());
  for (const text of ["The cat sleeps on the sofa", "Invoices are due at the end of the month", "Deploys happen on Fridays"]) {
    assert.ok(m.remember({ partition: "group:a", text, claim: claim("alice", text) }).ok);
  }
  await m.drained();
  assert.deepEqual(m.embeddingStatus(), { pending: 0, ready: 3, failed: 0, queued: 0, halted: null });
  const hybrid = await m.search({ partitions: ["group:a"], text: "the cat sleeps on the sofa", mode: "hybrid", limit: 3 });
  assert.ok(hybrid.ok);
  assert.equal(hybrid.value.vector, "used");
  assert.equal(hybrid.value.hits[0]?.record.text, "The cat sleeps on the sofa");
});

test("P-MEM-08 provider options: the key only as env:NAME, never over plain HTTP off loopback; deadlines and byte bounds hold", async (t) => {
  const env = (name: string) => (name === "K" ? KEY : undefined);
  const base = { model: "m", dims: 2, env };
  assert.deepEqual(openAiEmbeddingProvider({ ...base, baseUrl: "http://127.0.0.1:1/v1", apiKey: KEY }), { ok: false, error: { code: "embedding_config_invalid", field: "apiKey", retryable: false } });
  assert.deepEqual(openAiEmbeddingProvider({ ...base, baseUrl: "http://127.0.0.1:1/v1", apiKey: "env:MISSING" }), { ok: false, error: { code: "embedding_config_invalid", field: "apiKey", retryable: false } });
  assert.deepEqual(openAiEmbeddingProvider({ ...base, baseUrl: "http://example.com/v1", apiKey: "env:K" }), { ok: false, error: { code: "embedding_config_invalid", field: "apiKey", retryable: false } });
  assert.ok(openAiEmbeddingProvider({ ...base, baseUrl: "https://example.com/v1", apiKey: "env:K" }).ok);
  assert.deepEqual(openAiEmbeddingProvider({ ...base, baseUrl: "file:///etc/v1" }), { ok: false, error: { code: "embedding_config_invalid", field: "baseUrl", retryable: false } });
  assert.deepEqual(openAiEmbeddingProvider({ ...base, baseUrl: "http://127.0.0.1:1/v1", timeoutMs: 10_000_000 }), { ok: false, error: { code: "embedding_config_invalid", field: "timeoutMs", retryable: false } });
  // A server on 127.0.0.1 that hangs, then one that answers too much.
  let mode: "hang" | "huge" = "hang";
  const server = createServer((req, res) => {
    req.resume();
    if (mode === "huge") res.end(JSON.stringify({ data: [{ index: 0, embedding: new Array(100_000).fill(0.5) }] }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));
  const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
  const slow = openAiEmbeddingProvider({ ...base, baseUrl, timeoutMs: 200 });
  assert.ok(slow.ok);
  const started = Date.now();
  assert.deepEqual(await slow.value.embed(["x"], never), { ok: false, error: { code: "embedding_failed", retryable: true } });
  assert.ok(Date.now() - started < 5_000);
  mode = "huge";
  const bounded = openAiEmbeddingProvider({ ...base, baseUrl, maxResponseBytes: 1_024 });
  assert.ok(bounded.ok);
  assert.deepEqual(await bounded.value.embed(["x"], never), { ok: false, error: { code: "embedding_failed", retryable: false } });
});
