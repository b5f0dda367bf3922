// A WebAssembly SIMD kernel for the vector index's brute-force cosine: it
// scores a list of slots (the partition filter already applied) against one
// query, four float32 lanes at a time. The module is assembled here from its
// instructions (no build step, no binary blob), validated, and instantiated
// over a memory the index owns. Where WebAssembly SIMD is missing the index
// keeps its JavaScript loop.

export const I32 = 0x7f;
export const V128 = 0x7b;
export const op = {
  block: 0x02, loop: 0x03, end: 0x0b, br: 0x0c, brIf: 0x0d, void: 0x40,
  localGet: 0x20, localSet: 0x21, localTee: 0x22,
  i32Load: 0x28, f32Store: 0x38, i32Const: 0x41,
  i32GeU: 0x4f, i32LtU: 0x49, i32Add: 0x6a, i32Mul: 0x6c, i32Shl: 0x74, f32Add: 0x92,
} as const;
export const simd = (code: number): number[] => [0xfd, ...uleb(code)];
const V128_LOAD = (align: number) => [...simd(0x00), align, 0];
export const V128_ZERO = [...simd(0x0c), ...new Array<number>(16).fill(0)];
const F32X4_ADD = simd(0xe4);
const F32X4_MUL = simd(0xe6);
const lane = (n: number) => [...simd(0x1f), n];

export function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

export const name = (s: string) => [...uleb(s.length), ...new TextEncoder().encode(s)];
export const section = (id: number, body: number[]) => [id, ...uleb(body.length), ...body];

// Parameters: 0 base (vectors), 1 query, 2 slot list, 3 count, 4 stride (floats, a multiple of 4), 5 out.
// Locals: 6 k, 7 row address, 8 byte offset in the row, 9 row bytes, 10 accumulator.
const [BASE, QUERY, SLOTS, COUNT, STRIDE, OUT, K, ROW, AT, BYTES, ACC] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
const get = (i: number) => [op.localGet, i];
const set = (i: number) => [op.localSet, i];
const i32 = (n: number) => [op.i32Const, n];

const BODY = [
  ...get(STRIDE), ...i32(2), op.i32Shl, ...set(BYTES),
  op.block, op.void,
  op.loop, op.void,
  ...get(K), ...get(COUNT), op.i32GeU, op.brIf, 1,
  // row = base + slots[k] * bytes
  ...get(BASE), ...get(SLOTS), ...get(K), ...i32(2), op.i32Shl, op.i32Add, op.i32Load, 2, 0, ...get(BYTES), op.i32Mul, op.i32Add, ...set(ROW),
  ...V128_ZERO, ...set(ACC), ...i32(0), ...set(AT),
  op.loop, op.void,
  ...get(ACC),
  ...get(ROW), ...get(AT), op.i32Add, ...V128_LOAD(4),
  ...get(QUERY), ...get(AT), op.i32Add, ...V128_LOAD(4),
  ...F32X4_MUL, ...F32X4_ADD, ...set(ACC),
  ...get(AT), ...i32(16), op.i32Add, op.localTee, AT, ...get(BYTES), op.i32LtU, op.brIf, 0,
  op.end,
  // out[k] = ((lane0 + lane1) + lane2) + lane3
  ...get(OUT), ...get(K), ...i32(2), op.i32Shl, op.i32Add,
  ...get(ACC), ...lane(0), ...get(ACC), ...lane(1), op.f32Add, ...get(ACC), ...lane(2), op.f32Add, ...get(ACC), ...lane(3), op.f32Add,
  op.f32Store, 2, 0,
  ...get(K), ...i32(1), op.i32Add, ...set(K),
  op.br, 0,
  op.end,
  op.end,
  op.end,
];

const LOCALS = [2, ...uleb(4), I32, ...uleb(1), V128];
const CODE = [...LOCALS, ...BODY];

/** The module's bytes: one imported memory, one exported function `scores`. */
export const DOT_KERNEL_BYTES = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [1, 0x60, 6, I32, I32, I32, I32, I32, I32, 0]),
  ...section(2, [1, ...name("env"), ...name("memory"), 0x02, 0x00, 0x01]),
  ...section(3, [1, 0]),
  ...section(7, [1, ...name("scores"), 0x00, 0]),
  ...section(10, [1, ...uleb(CODE.length), ...CODE]),
]);

/** scores(base, query, slots, count, stride, out): out[k] = vectors[slots[k]] · query, byte addresses. */
type ScoresFn = (base: number, query: number, slots: number, count: number, stride: number, out: number) => void;

/** The slice of the WebAssembly API used here (the package's TypeScript libs do not declare it). */
export type WasmMemory = { readonly buffer: ArrayBuffer; grow(pages: number): number };
export type WasmApi = {
  validate(bytes: Uint8Array): boolean;
  Memory: new (descriptor: { initial: number }) => WasmMemory;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> };
};

export const PAGE = 65_536;
const align16 = (n: number) => Math.ceil(n / 16) * 16;

/** Vectors and scratch in one WebAssembly memory: [query][vectors…][slot list][scores]. */
export class DotKernel {
  readonly stride: number;
  readonly #memory: WasmMemory;
  readonly #scores: ScoresFn;
  readonly #vectorsAt: number;
  #capacity = 0;

  private constructor(stride: number, memory: WasmMemory, scores: ScoresFn) {
    this.stride = stride;
    this.#memory = memory;
    this.#scores = scores;
    this.#vectorsAt = align16(stride * 4);
  }

  /** A kernel for vectors of `dims` floats, or null where WebAssembly SIMD is unavailable. */
  static create(dims: number): DotKernel | null {
    const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
    if (wasm === undefined || !wasm.validate(DOT_KERNEL_BYTES)) return null;
    try {
      const memory = new wasm.Memory({ initial: 1 });
      const instance = new wasm.Instance(new wasm.Module(DOT_KERNEL_BYTES), { env: { memory } });
      return new DotKernel(Math.ceil(dims / 4) * 4, memory, instance.exports.scores as ScoresFn);
    } catch {
      return null;
    }
  }

  get #slotsAt(): number {
    return this.#vectorsAt + this.#capacity * this.stride * 4;
  }

  /** Makes room for `slots` vectors (and that many scratch entries); views taken before are stale. */
  ensure(slots: number): void {
    if (slots <= this.#capacity) return;
    const capacity = Math.max(slots, this.#capacity * 2, 64);
    const bytes = this.#vectorsAt + capacity * this.stride * 4 + capacity * 8;
    const pages = Math.ceil(bytes / PAGE) - this.#memory.buffer.byteLength / PAGE;
    if (pages > 0) this.#memory.grow(pages);
    this.#capacity = capacity;
  }

  /** The vector rows (`stride` floats each). */
  vectors(): Float32Array {
    return new Float32Array(this.#memory.buffer, this.#vectorsAt, this.#capacity * this.stride);
  }

  /** The query row (`stride` floats; the padding stays zero). */
  query(): Float32Array {
    return new Float32Array(this.#memory.buffer, 0, this.stride);
  }

  /** The slot list the next run scores. */
  slots(): Int32Array {
    return new Int32Array(this.#memory.buffer, this.#slotsAt, this.#capacity);
  }

  /** Scores the first `count` listed slots; their scores, in list order. */
  run(count: number): Float32Array {
    const out = this.#slotsAt + this.#capacity * 4;
    this.#scores(this.#vectorsAt, 0, this.#slotsAt, count, this.stride, out);
    return new Float32Array(this.#memory.buffer, out, count);
  }
}
