// The native provider's BERT graph builder (P-MEM-08): on any weights, the
// ONNX graph it builds, run by onnxruntime-node with padded batches, agrees
// with a plain forward pass written from the architecture's definition; a
// checkpoint missing a tensor is refused with that tensor's name.
import assert from "node:assert/strict";
import { test } from "node:test";
import ort from "onnxruntime-node";
import { buildBertGraph } from "../../../src/memory/native/bert-graph.ts";
import { parseSafetensors } from "../../../src/memory/native/safetensors.ts";
import { referenceEmbed, TINY_SHAPE, tinyBert } from "../../support/tiny-bert.ts";

const int64 = (values: number[], rows: number, cols: number) => new ort.Tensor("int64", BigInt64Array.from(values, BigInt), [rows, cols]);

async function runGraph(onnx: Uint8Array, sequences: number[][]): Promise<Float32Array> {
  const session = await ort.InferenceSession.create(onnx, { logSeverityLevel: 3 });
  try {
    const cols = Math.max(...sequences.map((s) => s.length));
    const pad = (s: number[], fill: (i: number) => number) => Array.from({ length: cols }, (_, i) => (i < s.length ? fill(i) : 0));
    const out = await session.run({
      input_ids: int64(sequences.flatMap((s) => pad(s, (i) => s[i]!)), sequences.length, cols),
      attention_mask: int64(sequences.flatMap((s) => pad(s, () => 1)), sequences.length, cols),
      position_ids: int64(sequences.flatMap(() => Array.from({ length: cols }, (_, i) => i)), sequences.length, cols),
    });
    assert.deepEqual(out["embedding"]!.dims, [sequences.length, TINY_SHAPE.hidden]);
    return out["embedding"]!.data as Float32Array;
  } finally {
    await session.release();
  }
}

test("P-MEM-08 native graph: a padded batch through onnxruntime-node matches a plain forward pass, for several seeds", async () => {
  const sequences = [[2, 5, 7, 3], [2, 9, 3], [2, 4, 4, 8, 10, 1, 6, 3], [2, 3]];
  for (const seed of [1, 7, 2026]) {
    const { weights, file } = tinyBert(seed);
    const built = buildBertGraph(file, TINY_SHAPE);
    assert.ok(built.ok);
    const data = await runGraph(built.onnx, sequences);
    for (const [r, ids] of sequences.entries()) {
      const want = referenceEmbed(weights, TINY_SHAPE, ids);
      const got = Array.from(data.subarray(r * TINY_SHAPE.hidden, (r + 1) * TINY_SHAPE.hidden));
      const worst = Math.max(...got.map((g, k) => Math.abs(g - want[k]!)));
      assert.ok(worst < 1e-4, `seed ${seed} row ${r}: off by ${worst}`);
      assert.ok(Math.abs(Math.hypot(...got) - 1) < 1e-5);
    }
  }
});

test("P-MEM-08 native graph: the same weights give the same bytes; other weights give other bytes", () => {
  const a = buildBertGraph(tinyBert(5).file, TINY_SHAPE);
  const b = buildBertGraph(tinyBert(5).file, TINY_SHAPE);
  const c = buildBertGraph(tinyBert(6).file, TINY_SHAPE);
  assert.ok(a.ok && b.ok && c.ok);
  assert.deepEqual(a.onnx, b.onnx);
  assert.notDeepEqual(a.onnx, c.onnx);
});

test("P-MEM-08 native graph: a checkpoint missing a tensor, or with another shape, is refused naming it", () => {
  assert.deepEqual(buildBertGraph(tinyBert(1, "encoder.layer.1.output.dense.bias").file, TINY_SHAPE), {
    ok: false,
    error: { code: "weights_invalid", tensor: "encoder.layer.1.output.dense.bias" },
  });
  assert.deepEqual(buildBertGraph(tinyBert(1).file, { ...TINY_SHAPE, hidden: 12, heads: 3 }), {
    ok: false,
    error: { code: "weights_invalid", tensor: "embeddings.word_embeddings.weight" },
  });
  assert.deepEqual(buildBertGraph(new Uint8Array(4), TINY_SHAPE), { ok: false, error: { code: "weights_invalid", tensor: "(header)" } });
});

test("P-MEM-08 native safetensors: a header that lies about lengths or offsets is refused", () => {
  const { file } = tinyBert(1);
  assert.ok(parseSafetensors(file)?.has("embeddings.word_embeddings.weight"));
  const lying = file.slice();
  new DataView(lying.buffer).setBigUint64(0, BigInt(file.length), true);
  assert.equal(parseSafetensors(lying), null, "header longer than the file");
  const header = (text: string) => {
    const json = new TextEncoder().encode(text);
    const out = new Uint8Array(8 + json.length + 4);
    new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
    out.set(json, 8);
    return out;
  };
  assert.equal(parseSafetensors(header('{"t":{"dtype":"F32","shape":[1],"data_offsets":[0,8]}}')), null, "range past the data");
  assert.equal(parseSafetensors(header('{"t":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}')), null, "negative dimension");
  assert.equal(parseSafetensors(header("not json")), null);
  assert.equal(parseSafetensors(header('{"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'))?.get("t")?.bytes.length, 4);
});
