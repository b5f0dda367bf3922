// Run by the Deno lane's native embedding test, under Node or Deno: prints the
// native provider's vectors for the texts given as JSON on argv (as hex of the
// float32 bytes, so two runtimes can be compared bit for bit), or only the
// provider's start result.
//   native-helper.ts vectors <model dir> <json array of texts>
//   native-helper.ts start <model dir>

import { Buffer } from "node:buffer";
import process from "node:process";
import { createNativeEmbeddingProvider } from "../../src/memory/native/provider.ts";

const [mode, modelDir, texts] = process.argv.slice(2);
if ((mode !== "vectors" && mode !== "start") || modelDir === undefined) throw new Error("usage: native-helper.ts vectors|start <model dir> [json texts]");
const created = await createNativeEmbeddingProvider({ modelDir });
if (!created.ok) {
  process.stdout.write(`${JSON.stringify(created.error)}\n`);
  process.exitCode = 1;
} else if (mode === "start") {
  process.stdout.write(`${JSON.stringify({ ok: true, id: created.value.id })}\n`);
  await created.value.close();
} else {
  const result = await created.value.embed(JSON.parse(texts ?? "[]") as string[], new AbortController().signal);
  await created.value.close();
  if (!result.ok) throw new Error(`embed failed: ${result.error.code}`);
  const hex = result.value.map((v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("hex"));
  process.stdout.write(`${JSON.stringify(hex)}\n`);
}
