// The Deno lane for the native embedding provider (P-MEM-08): under Deno
// (with --allow-ffi, which loading onnxruntime-node's native addon needs) it
// gives the same vectors as under Node, bit for bit; without --allow-ffi it
// answers native_runtime_unavailable instead of failing later. Needs the
// installed model, like the Node tests (test/support/native-model.ts).

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { createNativeEmbeddingProvider } from "../../src/memory/native/provider.ts";
import { nativeModelDir } from "../support/native-model.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const NODE = join(ROOT, "node_modules", ".bin", "node");
const HELPER = join(ROOT, "test", "deno", "native-helper.ts");
const TEXTS = ["The new movie is awesome", "Remember: the standup moved to 9:30 on Tuesdays.", "Café naïve 中文 $5.00", ""];

const hex = (v: Float32Array) => Array.from(new Uint8Array(v.buffer, v.byteOffset, v.byteLength), (b) => b.toString(16).padStart(2, "0")).join("");

test("P-MEM-08 native provider under Deno: the same vectors as under Node, bit for bit", async () => {
  const dir = nativeModelDir();
  const created = await createNativeEmbeddingProvider({ modelDir: dir });
  if (!created.ok) throw new Error(`the native provider did not start under Deno: ${JSON.stringify(created.error)}`);
  let mine: string[];
  try {
    const result = await created.value.embed(TEXTS, new AbortController().signal);
    assert.ok(result.ok);
    assert.equal(result.value.length, TEXTS.length);
    assert.ok(result.value.every((v) => v.length === 384));
    mine = result.value.map(hex);
  } finally {
    await created.value.close();
  }
  const fromNode = spawnSync(NODE, [HELPER, "vectors", dir, JSON.stringify(TEXTS)], { encoding: "utf8", timeout: 60_000 });
  assert.equal(fromNode.status, 0, fromNode.stderr);
  assert.deepEqual(JSON.parse(fromNode.stdout), mine);
});

test("P-MEM-08 native provider under Deno without --allow-ffi: native_runtime_unavailable, as a value", () => {
  const run = spawnSync(process.execPath, ["run", "--allow-read", "--allow-env", "--allow-sys", HELPER, "start", nativeModelDir()], { encoding: "utf8", timeout: 60_000 });
  assert.equal(run.status, 1, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), { code: "native_runtime_unavailable", retryable: false });
  const allowed = spawnSync(process.execPath, ["run", "--allow-read", "--allow-env", "--allow-sys", "--allow-ffi", HELPER, "start", nativeModelDir()], { encoding: "utf8", timeout: 60_000 });
  assert.equal(allowed.status, 0, allowed.stderr);
  assert.match(JSON.parse(allowed.stdout).id, /^native:all-MiniLM-L6-v2@/);
});
