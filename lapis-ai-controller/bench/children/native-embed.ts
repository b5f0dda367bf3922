// Child of the `embeddings` bench row, under Node or Deno (--allow-ffi): the
// native embedding provider's resident-memory cost and its time per short
// sentence, in a fresh process so the RSS delta is the provider's alone.
//   native-embed.ts <model dir> <sentences>
// Prints one JSON line.

import process from "node:process";
import { createNativeEmbeddingProvider } from "../../src/memory/native/provider.ts";

const [modelDir, countText] = process.argv.slice(2);
if (modelDir === undefined) throw new Error("usage: native-embed.ts <model dir> <sentences>");
const count = Number(countText ?? "100");
const rssMiB = () => process.memoryUsage().rss / (1024 * 1024);
const signal = new AbortController().signal;
const sentences = Array.from({ length: count }, (_, i) => `Remember that note ${i}: the standup moved to Tuesday at ${9 + (i % 8)}:30.`);

const before = rssMiB();
let started = performance.now();
const created = await createNativeEmbeddingProvider({ modelDir });
if (!created.ok) throw new Error(`the native provider did not start: ${JSON.stringify(created.error)}`);
const startMs = performance.now() - started;
const provider = created.value;
await provider.embed(["warm up"], signal);
const single: number[] = [];
for (const sentence of sentences) {
  started = performance.now();
  const result = await provider.embed([sentence], signal);
  single.push(performance.now() - started);
  if (!result.ok) throw new Error(result.error.code);
}
started = performance.now();
const batched = await provider.embed(sentences, signal);
const batchMs = performance.now() - started;
if (!batched.ok) throw new Error(batched.error.code);
const after = rssMiB();
await provider.close();
single.sort((a, b) => a - b);
process.stdout.write(`${JSON.stringify({ before, after, startMs, medianMs: single[Math.floor(single.length / 2)], batchPerSentenceMs: batchMs / count })}\n`);
