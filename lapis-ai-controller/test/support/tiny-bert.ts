// A tiny BERT encoder with seeded random weights, written as a safetensors
// file, and a plain-loop forward pass of the same model written directly
// from the architecture's definition. The native provider's graph builder is
// checked against it: two independent implementations that must agree on any
// weights, padding included.

import type { BertShape } from "../../src/memory/native/bert-graph.ts";
import { createPrng } from "./chaos-prng.ts";

export const TINY_SHAPE: BertShape = { vocab: 11, hidden: 8, heads: 2, intermediate: 12, layers: 2, maxPositions: 16, layerNormEps: 1e-12 };

type Weights = Map<string, { shape: number[]; values: Float32Array }>;

/** Every tensor name and shape a BERT checkpoint of `shape` holds. */
function tensorShapes(s: BertShape): [string, number[]][] {
  const out: [string, number[]][] = [
    ["embeddings.word_embeddings.weight", [s.vocab, s.hidden]],
    ["embeddings.position_embeddings.weight", [s.maxPositions, s.hidden]],
    ["embeddings.token_type_embeddings.weight", [2, s.hidden]],
    ["embeddings.LayerNorm.weight", [s.hidden]],
    ["embeddings.LayerNorm.bias", [s.hidden]],
  ];
  for (let i = 0; i < s.layers; i++) {
    const p = `encoder.layer.${i}`;
    for (const n of ["attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"]) {
      out.push([`${p}.${n}.weight`, [s.hidden, s.hidden]], [`${p}.${n}.bias`, [s.hidden]]);
    }
    out.push([`${p}.intermediate.dense.weight`, [s.intermediate, s.hidden]], [`${p}.intermediate.dense.bias`, [s.intermediate]]);
    out.push([`${p}.output.dense.weight`, [s.hidden, s.intermediate]], [`${p}.output.dense.bias`, [s.hidden]]);
    for (const n of ["attention.output.LayerNorm", "output.LayerNorm"]) out.push([`${p}.${n}.weight`, [s.hidden]], [`${p}.${n}.bias`, [s.hidden]]);
  }
  return out;
}

/** Seeded weights (LayerNorm scales near 1) and their safetensors bytes; `drop` leaves one tensor out. */
export function tinyBert(seed: number, drop?: string): { weights: Weights; file: Uint8Array } {
  const random = createPrng(seed);
  const weights: Weights = new Map();
  for (const [name, shape] of tensorShapes(TINY_SHAPE)) {
    const values = new Float32Array(shape.reduce((a, b) => a * b, 1));
    const scale = name.endsWith("LayerNorm.weight");
    for (let i = 0; i < values.length; i++) values[i] = scale ? 0.8 + 0.4 * random() : (random() - 0.5) * 1.2;
    weights.set(name, { shape, values });
  }
  const header: Record<string, unknown> = { __metadata__: { format: "pt" } };
  let offset = 0;
  const kept = [...weights].filter(([name]) => name !== drop);
  for (const [name, t] of kept) {
    header[name] = { dtype: "F32", shape: t.shape, data_offsets: [offset, offset + t.values.byteLength] };
    offset += t.values.byteLength;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const file = new Uint8Array(8 + json.length + offset);
  new DataView(file.buffer).setBigUint64(0, BigInt(json.length), true);
  file.set(json, 8);
  let at = 8 + json.length;
  for (const [, t] of kept) {
    file.set(new Uint8Array(t.values.buffer), at);
    at += t.values.byteLength;
  }
  return { weights, file };
}

const get = (w: Weights, name: string): Float32Array => w.get(name)!.values;

/** y = x W^T + b for a PyTorch Linear with weight [out, in]. */
function linear(x: number[], w: Float32Array, b: Float32Array): number[] {
  const out = b.length;
  return Array.from({ length: out }, (_, o) => x.reduce((sum, v, i) => sum + v * w[o * x.length + i]!, b[o]!));
}

function layerNorm(x: number[], g: Float32Array, b: Float32Array, eps: number): number[] {
  const mean = x.reduce((a, v) => a + v, 0) / x.length;
  const variance = x.reduce((a, v) => a + (v - mean) ** 2, 0) / x.length;
  return x.map((v, i) => ((v - mean) / Math.sqrt(variance + eps)) * g[i]! + b[i]!);
}

/** The Gauss error function (Abramowitz-Stegun 7.1.26 is too coarse; this series is exact to float precision here). */
function erf(x: number): number {
  if (Math.abs(x) > 4) return Math.sign(x);
  let sum = 0;
  let term = x;
  for (let n = 0; n < 60; n++) {
    sum += term / (2 * n + 1);
    term *= (-x * x) / (n + 1);
  }
  return (2 / Math.sqrt(Math.PI)) * sum;
}

/** The sentence embedding of one unpadded token sequence: encoder, mean pooling, L2 normalization. */
export function referenceEmbed(w: Weights, s: BertShape, ids: number[]): number[] {
  const headDim = s.hidden / s.heads;
  const word = get(w, "embeddings.word_embeddings.weight");
  const pos = get(w, "embeddings.position_embeddings.weight");
  const type = get(w, "embeddings.token_type_embeddings.weight");
  let x = ids.map((id, t) =>
    layerNorm(Array.from({ length: s.hidden }, (_, k) => word[id * s.hidden + k]! + pos[t * s.hidden + k]! + type[k]!),
      get(w, "embeddings.LayerNorm.weight"), get(w, "embeddings.LayerNorm.bias"), s.layerNormEps));
  for (let l = 0; l < s.layers; l++) {
    const p = `encoder.layer.${l}`;
    const proj = (n: string) => x.map((row) => linear(row, get(w, `${p}.${n}.weight`), get(w, `${p}.${n}.bias`)));
    const [q, k, v] = [proj("attention.self.query"), proj("attention.self.key"), proj("attention.self.value")];
    const context = x.map((_, i) => {
      const row = new Array<number>(s.hidden).fill(0);
      for (let h = 0; h < s.heads; h++) {
        const base = h * headDim;
        const scores = k.map((kj) => kj.slice(base, base + headDim).reduce((a, kv, d) => a + kv * q[i]![base + d]!, 0) / Math.sqrt(headDim));
        const top = Math.max(...scores);
        const exps = scores.map((z) => Math.exp(z - top));
        const total = exps.reduce((a, e) => a + e, 0);
        for (let j = 0; j < exps.length; j++) for (let d = 0; d < headDim; d++) row[base + d]! += (exps[j]! / total) * v[j]![base + d]!;
      }
      return row;
    });
    x = x.map((row, i) => {
      const attended = linear(context[i]!, get(w, `${p}.attention.output.dense.weight`), get(w, `${p}.attention.output.dense.bias`));
      const mid = layerNorm(attended.map((a, d) => a + row[d]!), get(w, `${p}.attention.output.LayerNorm.weight`), get(w, `${p}.attention.output.LayerNorm.bias`), s.layerNormEps);
      const up = linear(mid, get(w, `${p}.intermediate.dense.weight`), get(w, `${p}.intermediate.dense.bias`)).map((u) => 0.5 * u * (1 + erf(u / Math.SQRT2)));
      const down = linear(up, get(w, `${p}.output.dense.weight`), get(w, `${p}.output.dense.bias`));
      return layerNorm(down.map((a, d) => a + mid[d]!), get(w, `${p}.output.LayerNorm.weight`), get(w, `${p}.output.LayerNorm.bias`), s.layerNormEps);
    });
  }
  const mean = Array.from({ length: s.hidden }, (_, d) => x.reduce((a, row) => a + row[d]!, 0) / x.length);
  const norm = Math.hypot(...mean);
  return mean.map((m) => m / norm);
}
