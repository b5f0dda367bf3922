// Which vectors the exact kernel scores. Each vector v is also kept as int8
// codes c with a scale s (v = s c + r), the length of the rounding error r,
// and its own length; the query q likewise (q = t d + e). Then
//   v . q = s t (c . d) + s c . e + r . q,
// and |s c . e| <= (|v| + |r|) |e|, |r . q| <= |r| |q|: the coarse score
// s t (c . d) is within a known distance of the true one. The vectors whose
// lower ends are the `depth` best set a floor; only a vector whose upper end
// reaches it can be in the answer (or tie at its cut), and only those are
// scored by the float32 kernel, the same kernel and arithmetic as without
// this pass, so the answer is the same to the last bit. A slack of 1e-4
// (times the lengths) covers the float32 kernel's own rounding, at most
// about 1e-5 here.
import { CodeKernel } from "./code-kernel.ts";

const SLACK = 1e-4;

/** Writes the int8 (or int16) codes of `v` at `at`; its scale, rounding error length and length. */
export function quantize(v: Float32Array, into: Int8Array | Int16Array, at: number): { scale: number; error: number; norm: number } {
  let max = 0;
  for (let i = 0; i < v.length; i++) max = Math.max(max, Math.abs(v[i] as number));
  const scale = max / 127;
  let error = 0;
  let norm = 0;
  for (let i = 0; i < v.length; i++) {
    const x = v[i] as number;
    const code = scale === 0 ? 0 : Math.max(-127, Math.min(127, Math.round(x / scale)));
    into[at + i] = code;
    const r = x - scale * code;
    error += r * r;
    norm += x * x;
  }
  return { scale, error: Math.sqrt(error), norm: Math.sqrt(norm) };
}

/** The coarse pass over a vector index's slots (kept in step by the index: set, move, ensure). */
export class VectorPrefilter {
  readonly #kernel: CodeKernel;
  #scale = new Float64Array(0);
  #error = new Float64Array(0);
  #norm = new Float64Array(0);
  #upper = new Float64Array(0);
  #slot = new Int32Array(0);
  #floor = new Float64Array(0);

  private constructor(kernel: CodeKernel) {
    this.#kernel = kernel;
  }

  /** A prefilter for `dims`, or null where WebAssembly SIMD is unavailable. */
  static create(dims: number): VectorPrefilter | null {
    const kernel = CodeKernel.create(dims);
    return kernel === null ? null : new VectorPrefilter(kernel);
  }

  /** Makes room for `capacity` slots, keeping the first `used`. */
  ensure(capacity: number, used: number): void {
    this.#kernel.ensure(capacity);
    const grow = <T extends Float64Array | Int32Array>(old: T, make: (n: number) => T): T => {
      const next = make(capacity);
      next.set(old.subarray(0, Math.min(used, old.length)) as never);
      return next;
    };
    this.#scale = grow(this.#scale, (n) => new Float64Array(n));
    this.#error = grow(this.#error, (n) => new Float64Array(n));
    this.#norm = grow(this.#norm, (n) => new Float64Array(n));
    this.#upper = new Float64Array(capacity);
    this.#slot = new Int32Array(capacity);
  }

  /** Keeps the codes of the vector now in `slot`. */
  set(slot: number, v: Float32Array): void {
    const q = quantize(v, this.#kernel.codes(), slot * this.#kernel.rowBytes);
    this.#scale[slot] = q.scale;
    this.#error[slot] = q.error;
    this.#norm[slot] = q.norm;
  }

  /** Copies slot `from` into slot `to`. */
  move(from: number, to: number): void {
    const bytes = this.#kernel.rowBytes;
    this.#kernel.codes().copyWithin(to * bytes, from * bytes, (from + 1) * bytes);
    this.#scale[to] = this.#scale[from] as number;
    this.#error[to] = this.#error[from] as number;
    this.#norm[to] = this.#norm[from] as number;
  }

  /**
   * Lists into `out` the slots of `ranges` that may be among the `depth`
   * most similar to `query` (a superset of them and of any tie at the cut);
   * answers how many.
   */
  candidates(query: Float32Array, ranges: readonly { start: number; end: number }[], depth: number, out: Int32Array): number {
    const codes = this.#kernel.query();
    codes.fill(0);
    const q = quantize(query, codes, 0);
    const floor = this.#floor.length >= depth ? this.#floor : (this.#floor = new Float64Array(depth));
    let kept = 0;
    let k = 0;
    for (const { start, end } of ranges) {
      const dots = this.#kernel.run(start, end);
      for (let j = 0; j < dots.length; j++) {
        const slot = start + j;
        const norm = this.#norm[slot] as number;
        const error = this.#error[slot] as number;
        const coarse = (this.#scale[slot] as number) * q.scale * (dots[j] as number);
        const reach = (norm + error) * q.error + error * q.norm + SLACK * (1 + norm * q.norm);
        this.#upper[k] = coarse + reach;
        this.#slot[k++] = slot;
        kept = keepBest(floor, kept, depth, coarse - reach);
      }
    }
    const bar = kept < depth ? Number.NEGATIVE_INFINITY : (floor[0] as number);
    let n = 0;
    for (let i = 0; i < k; i++) if ((this.#upper[i] as number) >= bar) out[n++] = this.#slot[i] as number;
    return n;
  }
}

/** Keeps the `depth` largest values seen in a min-heap (`heap[0]` the smallest kept); answers the kept count. */
function keepBest(heap: Float64Array, kept: number, depth: number, value: number): number {
  if (kept === depth) {
    if (value <= (heap[0] as number)) return kept;
    heap[0] = value;
    siftDown(heap, kept);
    return kept;
  }
  let i = kept;
  heap[i] = value;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if ((heap[parent] as number) <= (heap[i] as number)) break;
    [heap[parent], heap[i]] = [heap[i] as number, heap[parent] as number];
    i = parent;
  }
  return kept + 1;
}

function siftDown(heap: Float64Array, size: number): void {
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let m = i;
    if (l < size && (heap[l] as number) < (heap[m] as number)) m = l;
    if (r < size && (heap[r] as number) < (heap[m] as number)) m = r;
    if (m === i) return;
    [heap[i], heap[m]] = [heap[m] as number, heap[i] as number];
    i = m;
  }
}
