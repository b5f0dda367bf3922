// The vector index's coarse pass: each unit vector also kept as int8 codes
// (a scale per vector, the rounding error's length beside it), scored
// against the query's codes by a WebAssembly SIMD kernel that reads a
// quarter of the float32 bytes. The coarse scores only choose which vectors
// the exact float32 kernel scores (vector-prefilter.ts); they are never an
// answer. Assembled from its instructions like dot-kernel.ts.
import { I32, op, PAGE, section, name, simd, uleb, V128, V128_ZERO, type WasmApi, type WasmMemory } from "./dot-kernel.ts";

const I32_STORE = 0x36;
const I32X4_ADD = simd(0xae);
const I32X4_DOT_I16X8_S = simd(0xba);
const EXTEND_LOW_S = simd(0x87);
const EXTEND_HIGH_S = simd(0x88);
const load = (offset: number) => [...simd(0x00), 4, ...uleb(offset)];
const lane = (n: number) => [...simd(0x1b), n];

// Parameters: 0 base (codes), 1 query (int16 codes), 2 first slot, 3 end slot, 4 row bytes (a multiple of 16), 5 out (int32 per slot).
// Locals: 6 slot, 7 row address, 8 byte offset in the row, 9 accumulator, 10 sixteen codes.
const [BASE, QUERY, FROM, TO, BYTES, OUT, K, ROW, AT, ACC, TMP] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
const get = (i: number) => [op.localGet, i];
const set = (i: number) => [op.localSet, i];
const i32 = (n: number) => [op.i32Const, n];
/** acc += dot(extend(tmp half), query[at * 2 + offset]) */
const half = (extend: number[], offset: number) => [
  ...get(ACC), ...get(TMP), ...extend,
  ...get(QUERY), ...get(AT), ...i32(1), op.i32Shl, op.i32Add, ...load(offset),
  ...I32X4_DOT_I16X8_S, ...I32X4_ADD, ...set(ACC),
];

const BODY = [
  ...get(FROM), ...set(K),
  op.block, op.void,
  op.loop, op.void,
  ...get(K), ...get(TO), op.i32GeU, op.brIf, 1,
  ...get(BASE), ...get(K), ...get(BYTES), op.i32Mul, op.i32Add, ...set(ROW),
  ...V128_ZERO, ...set(ACC), ...i32(0), ...set(AT),
  op.loop, op.void,
  ...get(ROW), ...get(AT), op.i32Add, ...load(0), ...set(TMP),
  ...half(EXTEND_LOW_S, 0),
  ...half(EXTEND_HIGH_S, 16),
  ...get(AT), ...i32(16), op.i32Add, op.localTee, AT, ...get(BYTES), op.i32LtU, op.brIf, 0,
  op.end,
  // out[k - from] = lane0 + lane1 + lane2 + lane3
  ...get(OUT), ...get(K), ...get(FROM), 0x6b, ...i32(2), op.i32Shl, op.i32Add,
  ...get(ACC), ...lane(0), ...get(ACC), ...lane(1), op.i32Add, ...get(ACC), ...lane(2), op.i32Add, ...get(ACC), ...lane(3), op.i32Add,
  I32_STORE, 2, 0,
  ...get(K), ...i32(1), op.i32Add, ...set(K),
  op.br, 0,
  op.end,
  op.end,
  op.end,
];

const CODE = [2, ...uleb(3), I32, ...uleb(2), V128, ...BODY];

/** The module's bytes: one imported memory, one exported function `dots`. */
export const CODE_KERNEL_BYTES = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [1, 0x60, 6, I32, I32, I32, I32, I32, I32, 0]),
  ...section(2, [1, ...name("env"), ...name("memory"), 0x02, 0x00, 0x01]),
  ...section(3, [1, 0]),
  ...section(7, [1, ...name("dots"), 0x00, 0]),
  ...section(10, [1, ...uleb(CODE.length), ...CODE]),
]);

type DotsFn = (base: number, query: number, from: number, to: number, rowBytes: number, out: number) => void;

/** Codes and scratch in one WebAssembly memory: [query int16 codes][codes…][out int32 per slot]. */
export class CodeKernel {
  /** Bytes per code row (the dimension count rounded up to 16). */
  readonly rowBytes: number;
  readonly #memory: WasmMemory;
  readonly #dots: DotsFn;
  readonly #codesAt: number;
  #capacity = 0;

  private constructor(rowBytes: number, memory: WasmMemory, dots: DotsFn) {
    this.rowBytes = rowBytes;
    this.#memory = memory;
    this.#dots = dots;
    this.#codesAt = rowBytes * 2;
  }

  /** A kernel for `dims` codes a row, or null where WebAssembly SIMD is unavailable. */
  static create(dims: number): CodeKernel | null {
    const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
    if (wasm === undefined || !wasm.validate(CODE_KERNEL_BYTES)) return null;
    try {
      const memory = new wasm.Memory({ initial: 1 });
      const instance = new wasm.Instance(new wasm.Module(CODE_KERNEL_BYTES), { env: { memory } });
      return new CodeKernel(Math.ceil(dims / 16) * 16, memory, instance.exports.dots as DotsFn);
    } catch {
      return null;
    }
  }

  get #outAt(): number {
    return this.#codesAt + this.#capacity * this.rowBytes;
  }

  /** Makes room for `slots` code rows (the codes stay; views taken before are stale). */
  ensure(slots: number): void {
    if (slots <= this.#capacity) return;
    const capacity = Math.max(slots, this.#capacity * 2, 64);
    const bytes = this.#codesAt + capacity * (this.rowBytes + 4);
    const pages = Math.ceil(bytes / PAGE) - this.#memory.buffer.byteLength / PAGE;
    if (pages > 0) this.#memory.grow(pages);
    this.#capacity = capacity;
  }

  /** The code rows (`rowBytes` int8 each; the padding stays zero). */
  codes(): Int8Array {
    return new Int8Array(this.#memory.buffer, this.#codesAt, this.#capacity * this.rowBytes);
  }

  /** The query's codes (`rowBytes` int16; the padding stays zero). */
  query(): Int16Array {
    return new Int16Array(this.#memory.buffer, 0, this.rowBytes);
  }

  /** The integer dot products of slots [from, to) with the query's codes, in slot order. */
  run(from: number, to: number): Int32Array {
    const out = this.#outAt;
    this.#dots(this.#codesAt, 0, from, to, this.rowBytes, out);
    return new Int32Array(this.#memory.buffer, out, to - from);
  }
}
