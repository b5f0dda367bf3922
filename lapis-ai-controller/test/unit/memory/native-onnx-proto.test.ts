// The ONNX writer of the native embedding provider (P-MEM-08): a model it
// writes loads and runs in onnxruntime-node with the results the operators
// define, and the same spec always gives the same bytes.
import assert from "node:assert/strict";
import { test } from "node:test";
import ort from "onnxruntime-node";
import { floatBytes, int64Bytes, ONNX_FLOAT, ONNX_INT64, writeModel, type ModelSpec } from "../../../src/memory/native/onnx-proto.ts";

const SPEC: ModelSpec = {
  producer: "test",
  graphName: "tiny",
  opset: 17,
  nodes: [
    { op: "Gather", inputs: ["table", "ids"], outputs: ["rows"], name: "gather" },
    { op: "Add", inputs: ["rows", "bias"], outputs: ["shifted"], name: "add" },
    { op: "LayerNormalization", inputs: ["shifted", "scale", "offset"], outputs: ["normed"], name: "norm", attributes: [{ name: "axis", int: -1 }, { name: "epsilon", float: 1e-5 }] },
    { op: "Transpose", inputs: ["normed"], outputs: ["out"], name: "transpose", attributes: [{ name: "perm", ints: [1, 0] }] },
    { op: "Reshape", inputs: ["normed", "flat"], outputs: ["flattened"], name: "reshape" },
  ],
  initializers: [
    { name: "table", dataType: ONNX_FLOAT, dims: [3, 2], raw: floatBytes(Float32Array.of(1, 2, 3, 5, -4, 4)) },
    { name: "bias", dataType: ONNX_FLOAT, dims: [2], raw: floatBytes(Float32Array.of(10, 10)) },
    { name: "scale", dataType: ONNX_FLOAT, dims: [2], raw: floatBytes(Float32Array.of(2, 2)) },
    { name: "offset", dataType: ONNX_FLOAT, dims: [2], raw: floatBytes(Float32Array.of(0, 1)) },
    { name: "flat", dataType: ONNX_INT64, dims: [1], raw: int64Bytes([-1]) },
  ],
  inputs: [{ name: "ids", elemType: ONNX_INT64, dims: ["n"] }],
  outputs: [
    { name: "out", elemType: ONNX_FLOAT, dims: [2, "n"] },
    { name: "flattened", elemType: ONNX_FLOAT, dims: ["m"] },
  ],
};

test("P-MEM-08 native ONNX writer: a written model loads and computes what its operators define", async () => {
  const session = await ort.InferenceSession.create(writeModel(SPEC), { logSeverityLevel: 3 });
  try {
    const result = await session.run({ ids: new ort.Tensor("int64", BigInt64Array.of(2n, 0n, 1n), [3]) });
    // Rows [-4,4], [1,2], [3,5] each normalize to [-1, 1] (times scale 2, plus offset [0, 1]) up to epsilon.
    const out = result["out"]!;
    assert.deepEqual(out.dims, [2, 3]);
    const values = Array.from(out.data as Float32Array);
    for (const [i, want] of [-2, -2, -2, 3, 3, 3].entries()) assert.ok(Math.abs(values[i]! - want) < 1e-3, `out[${i}] = ${values[i]}`);
    assert.deepEqual(result["flattened"]!.dims, [6]);
  } finally {
    await session.release();
  }
});

test("P-MEM-08 native ONNX writer: the same spec gives the same bytes; negative int64 values survive", () => {
  const a = writeModel(SPEC);
  const b = writeModel({ ...SPEC, nodes: [...SPEC.nodes], initializers: [...SPEC.initializers] });
  assert.deepEqual(a, b);
  assert.deepEqual(Array.from(new BigInt64Array(int64Bytes([-1, 0, 2 ** 40]).buffer)), [-1n, 0n, 2n ** 40n]);
});

test("P-MEM-08 native ONNX writer: a malformed graph is refused by the runtime, not run", async () => {
  const broken: ModelSpec = { ...SPEC, nodes: [{ op: "NoSuchOperator", inputs: ["ids"], outputs: ["out"], name: "x" }] };
  await assert.rejects(ort.InferenceSession.create(writeModel(broken), { logSeverityLevel: 4 }));
});
