// The native provider's model files (P-MEM-08): the weights and vocabulary
// are used only when they hash to their pins; the graph is built from the
// checked weights, hashes to its own pin, and is cached beside them with a
// `sha256sum -c` record; a damaged cache is rebuilt; a read-only folder gets
// the graph in memory. Runs on the installed model (see test/support/native-model.ts).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { loadModelFiles, NATIVE_MODEL } from "../../../src/memory/native/model-files.ts";
import { nativeModelDir } from "../../support/native-model.ts";
import { tempDir } from "../../support/temp.ts";

const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

function folder(dir: string): void {
  const installed = nativeModelDir();
  symlinkSync(join(installed, NATIVE_MODEL.weights.file), join(dir, NATIVE_MODEL.weights.file));
  copyFileSync(join(installed, NATIVE_MODEL.vocab.file), join(dir, NATIVE_MODEL.vocab.file));
}

test("P-MEM-08 native model files: the graph is built once, pinned, cached with its sha256 record, then reused without the weights", async (t) => {
  const dir = tempDir(t, "aic-native-");
  folder(dir);
  const graph = join(dir, NATIVE_MODEL.graph.file);
  const first = await loadModelFiles(dir, true);
  assert.ok(first.ok);
  assert.deepEqual(first.value.graph, { path: graph });
  assert.equal(sha256(graph), NATIVE_MODEL.graph.sha256);
  assert.equal(readFileSync(`${graph}.sha256`, "utf8"), `${NATIVE_MODEL.graph.sha256}  ${NATIVE_MODEL.graph.file}\n`);
  assert.match(first.value.vocab, /^\[PAD\]\n/);
  rmSync(join(dir, NATIVE_MODEL.weights.file));
  const reused = await loadModelFiles(dir, true);
  assert.ok(reused.ok, "a cached graph that hashes to its pin needs no weights");
  assert.deepEqual(reused.value.graph, { path: graph });
});

test("P-MEM-08 native model files: a damaged cached graph is rebuilt from the weights", async (t) => {
  const dir = tempDir(t, "aic-native-");
  folder(dir);
  const graph = join(dir, NATIVE_MODEL.graph.file);
  writeFileSync(graph, "not a model");
  const loaded = await loadModelFiles(dir, true);
  assert.ok(loaded.ok);
  assert.equal(sha256(graph), NATIVE_MODEL.graph.sha256);
  rmSync(join(dir, NATIVE_MODEL.weights.file));
  writeFileSync(graph, "damaged again");
  assert.deepEqual(await loadModelFiles(dir, true), { ok: false, error: { code: "native_model_missing", retryable: false, file: "model.safetensors" } });
});

test("P-MEM-08 native model files: without caching, or where it cannot be written, the graph is answered in memory", async (t) => {
  const dir = tempDir(t, "aic-native-");
  folder(dir);
  const uncached = await loadModelFiles(dir, false);
  assert.ok(uncached.ok && "bytes" in uncached.value.graph);
  assert.equal(createHash("sha256").update(uncached.value.graph.bytes).digest("hex"), NATIVE_MODEL.graph.sha256);
  assert.equal(existsSync(join(dir, NATIVE_MODEL.graph.file)), false);
  // A folder where the graph cannot be written (a directory holds its name; works for root too).
  mkdirSync(join(dir, NATIVE_MODEL.graph.file, "blocker"), { recursive: true });
  const unwritable = await loadModelFiles(dir, true);
  assert.ok(unwritable.ok && "bytes" in unwritable.value.graph);
  assert.deepEqual(readdirSync(dir).sort(), [NATIVE_MODEL.graph.file, NATIVE_MODEL.weights.file, NATIVE_MODEL.vocab.file].sort(), "no temp file is left behind");
});

test("P-MEM-08 native model files: a file that does not hash to its pin is refused, naming the file", async (t) => {
  const dir = tempDir(t, "aic-native-");
  folder(dir);
  writeFileSync(join(dir, NATIVE_MODEL.vocab.file), readFileSync(join(dir, NATIVE_MODEL.vocab.file), "utf8").replace("[UNK]", "[UNKNOWN]"));
  assert.deepEqual(await loadModelFiles(dir, true), { ok: false, error: { code: "native_model_mismatch", retryable: false, file: "vocab.txt" } });
  copyFileSync(join(nativeModelDir(), NATIVE_MODEL.vocab.file), join(dir, NATIVE_MODEL.vocab.file));
  rmSync(join(dir, NATIVE_MODEL.weights.file));
  writeFileSync(join(dir, NATIVE_MODEL.weights.file), new Uint8Array(1024));
  assert.deepEqual(await loadModelFiles(dir, true), { ok: false, error: { code: "native_model_mismatch", retryable: false, file: "model.safetensors" } });
  assert.equal(existsSync(join(dir, NATIVE_MODEL.graph.file)), false, "nothing is built from unchecked weights");
});
