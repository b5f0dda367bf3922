// Builds the ONNX inference graph of a BERT sentence encoder (the shape of
// all-MiniLM-L6-v2) from its safetensors weights: embeddings (word + position
// + token type 0) with LayerNormalization, N encoder layers (multi-head
// self-attention with the padding mask, Erf GELU feed-forward, post-norm
// residuals), then mean pooling over the attention mask and L2 normalization.
// Inputs: input_ids, attention_mask, position_ids (int64 [batch, seq]).
// Output: embedding (float [batch, hidden]), unit length.

import { floatBytes, type GraphNode, type Initializer, int64Bytes, ONNX_FLOAT, ONNX_INT64, writeModel } from "./onnx-proto.ts";
import { f32, f32Values, parseSafetensors, type SafeTensor } from "./safetensors.ts";

/** The encoder's dimensions (config.json of the model). */
export type BertShape = {
  readonly vocab: number;
  readonly hidden: number;
  readonly heads: number;
  readonly intermediate: number;
  readonly layers: number;
  readonly maxPositions: number;
  readonly layerNormEps: number;
};

/** all-MiniLM-L6-v2. */
export const MINILM_L6_SHAPE: BertShape = {
  vocab: 30522,
  hidden: 384,
  heads: 12,
  intermediate: 1536,
  layers: 6,
  maxPositions: 512,
  layerNormEps: 1e-12,
};

/** The mask bias of a padded position: exp() of it is 0 in float32, as in the original model. */
const MASKED = -10000;

/** A failure to build: which tensor is missing or has the wrong shape (a name, never data). */
export type GraphBuildError = { readonly code: "weights_invalid"; readonly tensor: string };

class Builder {
  readonly nodes: GraphNode[] = [];
  readonly initializers: Initializer[] = [];
  private count = 0;

  op(op: string, inputs: string[], attributes?: GraphNode["attributes"]): string {
    const out = `${op.toLowerCase()}_${this.count++}`;
    this.nodes.push(attributes === undefined ? { op, inputs, outputs: [out], name: out } : { op, inputs, outputs: [out], name: out, attributes });
    return out;
  }

  floats(name: string, dims: number[], values: Float32Array): string {
    this.initializers.push({ name, dataType: ONNX_FLOAT, dims, raw: floatBytes(values) });
    return name;
  }

  weight(name: string, t: SafeTensor): string {
    this.initializers.push({ name, dataType: ONNX_FLOAT, dims: [...t.shape], raw: t.bytes });
    return name;
  }

  ints(name: string, values: number[]): string {
    this.initializers.push({ name, dataType: ONNX_INT64, dims: [values.length], raw: int64Bytes(values) });
    return name;
  }
}

/** [out, in] (PyTorch Linear) transposed to [in, out] for MatMul. */
function transposed(t: SafeTensor): Float32Array {
  const [rows, cols] = t.shape as [number, number];
  const src = f32Values(t);
  const dst = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) dst[c * rows + r] = src[r * cols + c] ?? 0;
  return dst;
}

/**
 * The ONNX bytes of the encoder, or which weight is missing. Deterministic:
 * the same weights always give the same bytes (their sha256 is pinned by the caller).
 */
export function buildBertGraph(weights: Uint8Array, shape: BertShape = MINILM_L6_SHAPE): { ok: true; onnx: Uint8Array } | { ok: false; error: GraphBuildError } {
  const tensors = parseSafetensors(weights);
  if (tensors === null) return { ok: false, error: { code: "weights_invalid", tensor: "(header)" } };
  const { hidden: h, heads, intermediate, layers } = shape;
  const headDim = h / heads;
  const need = (name: string, dims: number[]): SafeTensor => {
    const t = f32(tensors, name, dims);
    if (t === null) throw new MissingTensor(name);
    return t;
  };
  const b = new Builder();
  try {
    const shapeHeads = b.ints("shape_heads", [0, 0, heads, headDim]);
    const shapeHidden = b.ints("shape_hidden", [0, 0, h]);
    const axes12 = b.ints("axes_1_2", [1, 2]);
    const axis1 = b.ints("axis_1", [1]);
    const axis2 = b.ints("axis_2", [2]);
    const one = b.floats("one", [], Float32Array.of(1));
    const half = b.floats("half", [], Float32Array.of(0.5));
    const masked = b.floats("masked", [], Float32Array.of(MASKED));
    const scale = b.floats("attention_scale", [], Float32Array.of(1 / Math.sqrt(headDim)));
    const sqrt2 = b.floats("sqrt2", [], Float32Array.of(Math.SQRT2));
    const tiny = b.floats("tiny", [], Float32Array.of(1e-9));
    const normFloor = b.floats("norm_floor", [], Float32Array.of(1e-12));

    const linear = (x: string, prefix: string, inDim: number, outDim: number): string => {
      const w = b.floats(`${prefix}.weight_t`, [inDim, outDim], transposed(need(`${prefix}.weight`, [outDim, inDim])));
      const bias = b.weight(`${prefix}.bias`, need(`${prefix}.bias`, [outDim]));
      return b.op("Add", [b.op("MatMul", [x, w]), bias]);
    };
    const layerNorm = (x: string, prefix: string): string =>
      b.op("LayerNormalization", [x, b.weight(`${prefix}.weight`, need(`${prefix}.weight`, [h])), b.weight(`${prefix}.bias`, need(`${prefix}.bias`, [h]))], [
        { name: "axis", int: -1 },
        { name: "epsilon", float: shape.layerNormEps },
      ]);

    // Embeddings: every token's type is 0, so its row is one constant vector.
    const word = b.op("Gather", [b.weight("embeddings.word_embeddings.weight", need("embeddings.word_embeddings.weight", [shape.vocab, h])), "input_ids"]);
    const position = b.op("Gather", [
      b.weight("embeddings.position_embeddings.weight", need("embeddings.position_embeddings.weight", [shape.maxPositions, h])),
      "position_ids",
    ]);
    const typeRows = f32Values(need("embeddings.token_type_embeddings.weight", [2, h]));
    const type0 = b.floats("token_type_0", [h], typeRows.slice(0, h));
    let x = layerNorm(b.op("Add", [b.op("Add", [word, position]), type0]), "embeddings.LayerNorm");

    // The mask as float [batch, seq] and as the additive attention bias [batch, 1, 1, seq].
    const mask = b.op("Cast", ["attention_mask"], [{ name: "to", int: ONNX_FLOAT }]);
    const bias = b.op("Unsqueeze", [b.op("Mul", [b.op("Sub", [one, mask]), masked]), axes12]);

    for (let i = 0; i < layers; i++) {
      const p = `encoder.layer.${i}`;
      const split = (t: string, perm: number[]): string => b.op("Transpose", [b.op("Reshape", [t, shapeHeads])], [{ name: "perm", ints: perm }]);
      const q = split(linear(x, `${p}.attention.self.query`, h, h), [0, 2, 1, 3]);
      const k = split(linear(x, `${p}.attention.self.key`, h, h), [0, 2, 3, 1]);
      const v = split(linear(x, `${p}.attention.self.value`, h, h), [0, 2, 1, 3]);
      const scores = b.op("Add", [b.op("Mul", [b.op("MatMul", [q, k]), scale]), bias]);
      const probs = b.op("Softmax", [scores], [{ name: "axis", int: -1 }]);
      const context = b.op("Transpose", [b.op("MatMul", [probs, v])], [{ name: "perm", ints: [0, 2, 1, 3] }]);
      const attended = linear(b.op("Reshape", [context, shapeHidden]), `${p}.attention.output.dense`, h, h);
      x = layerNorm(b.op("Add", [attended, x]), `${p}.attention.output.LayerNorm`);
      const up = linear(x, `${p}.intermediate.dense`, h, intermediate);
      const gelu = b.op("Mul", [b.op("Mul", [up, half]), b.op("Add", [b.op("Erf", [b.op("Div", [up, sqrt2])]), one])]);
      const down = linear(gelu, `${p}.output.dense`, intermediate, h);
      x = layerNorm(b.op("Add", [down, x]), `${p}.output.LayerNorm`);
    }

    // Mean over the real tokens, then unit length.
    const weightsMask = b.op("Unsqueeze", [mask, axis2]);
    const summed = b.op("ReduceSum", [b.op("Mul", [x, weightsMask]), axis1], [{ name: "keepdims", int: 0 }]);
    const counted = b.op("Max", [b.op("ReduceSum", [weightsMask, axis1], [{ name: "keepdims", int: 0 }]), tiny]);
    const mean = b.op("Div", [summed, counted]);
    const norm = b.op("Max", [b.op("Sqrt", [b.op("ReduceSum", [b.op("Mul", [mean, mean]), axis1], [{ name: "keepdims", int: 1 }])]), normFloor]);
    b.nodes.push({ op: "Div", inputs: [mean, norm], outputs: ["embedding"], name: "embedding" });
  } catch (error) {
    if (error instanceof MissingTensor) return { ok: false, error: { code: "weights_invalid", tensor: error.tensor } };
    throw error;
  }
  const onnx = writeModel({
    producer: "lapis-ai-controller",
    graphName: "sentence_encoder",
    opset: 17,
    nodes: b.nodes,
    initializers: b.initializers,
    inputs: ["input_ids", "attention_mask", "position_ids"].map((name) => ({ name, elemType: ONNX_INT64, dims: ["batch", "sequence"] })),
    outputs: [{ name: "embedding", elemType: ONNX_FLOAT, dims: ["batch", h] }],
  });
  return { ok: true, onnx };
}

class MissingTensor extends Error {
  readonly tensor: string;
  constructor(tensor: string) {
    super(`missing or misshapen tensor ${tensor}`);
    this.tensor = tensor;
  }
}
