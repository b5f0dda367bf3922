// The pinned native embedding provider with the real model (P-MEM-08): it
// runs where scripts/embeddings/install.sh has run (CI's .ci/run does) and
// fails with that cause otherwise. Known vectors are not available offline,
// so the proof is what only a correct model gives: the similarities the
// model's authors publish for their own example sentences, paraphrases far
// above unrelated sentences, unit length, 384 dimensions, determinism, and a
// batch equal to its texts embedded one by one.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createNativeEmbeddingProvider, type NativeEmbeddingProvider } from "../../../src/memory/native/provider.ts";
import { nativeModelDir } from "../../support/native-model.ts";

let provider: NativeEmbeddingProvider;
const live = () => new AbortController().signal;

before(async () => {
  const created = await createNativeEmbeddingProvider({ modelDir: nativeModelDir() });
  if (!created.ok) throw new Error(`the native provider did not start: ${JSON.stringify(created.error)}`);
  provider = created.value;
});
after(async () => provider?.close());

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * (b[i] ?? NaN), 0);

async function vectors(texts: string[]): Promise<Float32Array[]> {
  const result = await provider.embed(texts, live());
  if (!result.ok) throw new Error(`embed failed: ${result.error.code}`);
  return result.value;
}

// Cosine similarities the authors of all-MiniLM-L6-v2 publish (4 decimals) for these sentences.
const PUBLISHED: [string, string, number][] = [
  ["The weather is lovely today.", "It's so sunny outside!", 0.666],
  ["The weather is lovely today.", "He drove to the stadium.", 0.1046],
  ["It's so sunny outside!", "He drove to the stadium.", 0.1411],
  ["The new movie is awesome", "The dog plays in the garden", 0.0543],
  ["The new movie is awesome", "The new movie is so great", 0.8939],
  ["The new movie is awesome", "A woman watches TV", -0.0502],
  ["The cat sits outside", "The dog plays in the garden", 0.2838],
  ["The cat sits outside", "The new movie is so great", -0.0029],
  ["The cat sits outside", "A woman watches TV", 0.131],
  ["A man is playing guitar", "The dog plays in the garden", 0.2277],
  ["A man is playing guitar", "The new movie is so great", -0.0136],
  ["A man is playing guitar", "A woman watches TV", -0.0327],
];

test("P-MEM-08 native provider: 384-dimension unit vectors that reproduce the model's published similarities", async () => {
  assert.equal(provider.dims, 384);
  assert.match(provider.id, /^native:all-MiniLM-L6-v2@[0-9a-f]{12}\/256$/);
  const texts = [...new Set(PUBLISHED.flatMap(([a, b]) => [a, b]))];
  const byText = new Map((await vectors(texts)).map((v, i) => [texts[i]!, v]));
  for (const v of byText.values()) {
    assert.equal(v.length, 384);
    assert.ok(Math.abs(Math.hypot(...v) - 1) < 1e-5, "unit length");
  }
  for (const [a, b, published] of PUBLISHED) {
    const got = cosine(byText.get(a)!, byText.get(b)!);
    assert.ok(Math.abs(got - published) < 1e-3, `${a} / ${b}: ${got.toFixed(4)}, published ${published}`);
  }
});

test("P-MEM-08 native provider: a paraphrase scores far above every unrelated sentence of a fixed set", async () => {
  const pairs: [string, string][] = [
    ["The release is scheduled to ship on Friday.", "We deploy the new version at the end of the week."],
    ["My password manager stores every login.", "All my credentials are kept in a vault app."],
    ["The database migration failed because the disk was full.", "There was no storage space left, so the schema upgrade broke."],
    ["She prefers tea without sugar in the morning.", "In the mornings she drinks her tea unsweetened."],
    ["The cat is sleeping on the windowsill.", "A kitten naps by the window."],
  ];
  const v = await vectors(pairs.flat());
  for (let i = 0; i < pairs.length; i++) {
    const paraphrase = cosine(v[2 * i]!, v[2 * i + 1]!);
    const unrelated = Math.max(...v.filter((_, j) => Math.floor(j / 2) !== i).map((u) => cosine(v[2 * i]!, u)));
    assert.ok(paraphrase > 0.45, `pair ${i}: paraphrase ${paraphrase.toFixed(3)}`);
    assert.ok(paraphrase > unrelated + 0.25, `pair ${i}: paraphrase ${paraphrase.toFixed(3)} vs unrelated ${unrelated.toFixed(3)}`);
  }
});

test("P-MEM-08 native provider: deterministic, and a batch (over two runs of 16) equals its texts embedded one by one", async () => {
  const texts = Array.from({ length: 20 }, (_, i) => `Note ${i}: ${"remember the quarterly report ".repeat(1 + (i % 5))}and call Dana.`);
  const batch = await vectors(texts);
  const again = await vectors(texts);
  assert.deepEqual(again, batch, "the same texts give bit-identical vectors");
  assert.equal(batch.length, 20);
  for (const [i, text] of texts.entries()) {
    const [single] = await vectors([text]);
    const worst = Math.max(...single!.map((x, k) => Math.abs(x - batch[i]![k]!)));
    assert.ok(worst < 1e-5, `text ${i}: padding in the batch moved a component by ${worst}`);
  }
  const [x, y] = await Promise.all([vectors([texts[0]!]), vectors([texts[0]!])]);
  assert.deepEqual(x, y, "concurrent calls are serialized and agree");
});

test("P-MEM-08 native provider: texts past 256 tokens are truncated, so what follows the limit changes nothing", async () => {
  const long = "alpha beta gamma delta ".repeat(80);
  const [a, b, short] = await vectors([long, `${long} an entirely different ending about volcanoes`, "alpha beta gamma delta"]);
  assert.deepEqual(a, b);
  assert.ok(cosine(a!, short!) < 0.999, "the long text is not reduced to its first words");
  assert.deepEqual(await vectors([]), []);
  const [empty] = await vectors([""]);
  assert.ok(Math.abs(Math.hypot(...empty!) - 1) < 1e-5, "an empty text still embeds ([CLS] [SEP])");
});

test("P-MEM-08 native provider: limits and aborts are values with stable codes, never text", async () => {
  const tooMany = await provider.embed(Array.from({ length: 1025 }, () => "x"), live());
  assert.deepEqual(tooMany, { ok: false, error: { code: "memory_limit_exceeded", retryable: false } });
  const aborted = new AbortController();
  aborted.abort();
  assert.deepEqual(await provider.embed(["secret text CANARY-NATIVE-1"], aborted.signal), { ok: false, error: { code: "embedding_failed", retryable: true } });
  for (const [option, value] of [["maxTokens", 4], ["maxTokens", 513], ["maxBatch", 0], ["maxTexts", 1.5], ["threads", 17]] as const) {
    const created = await createNativeEmbeddingProvider({ modelDir: "/nonexistent", [option]: value });
    assert.deepEqual(created, { ok: false, error: { code: "native_options_invalid", retryable: false, option } });
  }
});

test("P-MEM-08 native provider: an abort while waiting behind another call answers at once; the queue goes on", async () => {
  const long = Array.from({ length: 64 }, (_, i) => `${i} ${"a long memory about the garden and the weather ".repeat(40)}`);
  const first = provider.embed(long, live());
  const waiting = new AbortController();
  const second = provider.embed(["queued behind the long call"], waiting.signal);
  let firstDone = false;
  void first.then(() => (firstDone = true));
  setTimeout(() => waiting.abort(), 5);
  assert.deepEqual(await second, { ok: false, error: { code: "embedding_failed", retryable: true } });
  assert.equal(firstDone, false, "the aborted caller did not wait for the call ahead of it");
  const done = await first;
  assert.ok(done.ok && done.value.length === 64);
  assert.equal((await vectors(["after the abort"])).length, 1);
});

test("P-MEM-08 native provider: a missing model folder is native_model_missing naming the file", async () => {
  const created = await createNativeEmbeddingProvider({ modelDir: "/nonexistent/embeddings" });
  assert.deepEqual(created, { ok: false, error: { code: "native_model_missing", retryable: false, file: "vocab.txt" } });
});

test("P-MEM-08 native provider: close stops queued work; after close every call is embedding_failed; close is idempotent", async () => {
  const created = await createNativeEmbeddingProvider({ modelDir: nativeModelDir() });
  assert.ok(created.ok);
  const own = created.value;
  const pending = own.embed(["queued before close"], live());
  await own.close();
  await own.close();
  assert.deepEqual(await pending, { ok: false, error: { code: "embedding_failed", retryable: false } }, "queued work is stopped, not run");
  assert.deepEqual(await own.embed(["after"], live()), { ok: false, error: { code: "embedding_failed", retryable: false } });
});
