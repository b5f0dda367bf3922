// The in-memory vector index: unit-length float32 vectors in one contiguous
// array (rows padded to a multiple of four floats), scored by brute-force
// cosine (a dot product of unit vectors). Each partition's vectors lie in one
// contiguous range of slots, so the partition filter is a list of whole
// ranges, built before a single multiplication (another partition's vectors
// are never scored), and the scoring streams through memory: a scattered
// slot list (one partition's rows interleaved with another's) reads about
// twice the memory time, the cache lines and pages between them included. The scoring runs in the WebAssembly
// SIMD kernel (dot-kernel.ts) where the runtime has it, else in JavaScript.
// With the kernel, a large search first runs a coarse int8 pass
// (vector-prefilter.ts) that proves which vectors cannot be in the answer;
// the kernel scores the rest, so the answer is the same to the last bit.
// Loaded from the stored vectors at open (no embedding call) and kept in step
// by the profile.
import { DotKernel } from "./dot-kernel.ts";
import { VectorPrefilter } from "./vector-prefilter.ts";

/** One scored vector: its record row, id and update time. */
export type VectorHit = { readonly rowNo: number; readonly id: string; readonly updatedAt: string; readonly score: number };

/** Which scoring loop to use: the SIMD kernel with the coarse pass when available (default), the kernel alone, or always JavaScript. */
export type VectorKernel = "auto" | "exact" | "js";

/** Vectors a search must list before the coarse pass runs (below it, or for a deep search, the kernel scores all). */
export const PREFILTER_FROM = 2_048;

/** Scales `v` to unit length in place; false when it has no length or holds a non-finite number. */
export function normalize(v: Float32Array): boolean {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += (v[i] as number) * (v[i] as number);
  if (!Number.isFinite(sum) || sum === 0) return false;
  const scale = 1 / Math.sqrt(sum);
  for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) * scale;
  return true;
}

/** The dot product of `q` (`dims` long) with the row at `offset` of `data`. */
function dot(data: Float32Array, offset: number, q: Float32Array, dims: number): number {
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  let i = 0;
  for (; i + 3 < dims; i += 4) {
    a += (data[offset + i] as number) * (q[i] as number);
    b += (data[offset + i + 1] as number) * (q[i + 1] as number);
    c += (data[offset + i + 2] as number) * (q[i + 2] as number);
    d += (data[offset + i + 3] as number) * (q[i + 3] as number);
  }
  for (; i < dims; i++) a += (data[offset + i] as number) * (q[i] as number);
  return a + b + c + d;
}

type Entry = { slot: number; score: number };

/** Vectors of one provider and dimension count. */
export class VectorIndex {
  readonly dims: number;
  readonly stride: number;
  readonly #kernel: DotKernel | null;
  readonly #prefilter: VectorPrefilter | null;
  #scored = 0;
  #data: Float32Array;
  #capacity = 0;
  #partitions = new Int32Array(0);
  #jsSlots = new Int32Array(0);
  #jsScores = new Float64Array(0);
  readonly #rowNos: number[] = [];
  readonly #ids: string[] = [];
  readonly #updated: string[] = [];
  readonly #slotOf = new Map<number, number>();
  /** Each partition's slots [start, end), the ranges adjacent in `#order` (a partition leaves when its last vector does). */
  readonly #ranges = new Map<number, { start: number; end: number }>();
  readonly #order: number[] = [];

  constructor(dims: number, capacity = 1_024, kernel: VectorKernel = "auto") {
    this.dims = dims;
    this.stride = Math.ceil(dims / 4) * 4;
    this.#kernel = kernel === "js" ? null : DotKernel.create(dims);
    this.#prefilter = kernel === "auto" && this.#kernel !== null ? VectorPrefilter.create(dims) : null;
    this.#data = new Float32Array(0);
    this.#ensure(Math.max(1, capacity));
  }

  /** Whether scoring runs in the SIMD kernel. */
  get simd(): boolean {
    return this.#kernel !== null;
  }

  /** Vectors the last search scored exactly (all it listed, or the coarse pass's candidates). */
  get scored(): number {
    return this.#scored;
  }

  get size(): number {
    return this.#rowNos.length;
  }

  has(rowNo: number): boolean {
    return this.#slotOf.has(rowNo);
  }

  #ensure(slots: number): void {
    if (slots <= this.#capacity) return;
    const capacity = Math.max(slots, this.#capacity * 2);
    if (this.#kernel !== null) {
      this.#kernel.ensure(capacity);
      this.#data = this.#kernel.vectors();
    } else {
      const grown = new Float32Array(capacity * this.stride);
      grown.set(this.#data.subarray(0, this.#rowNos.length * this.stride));
      this.#data = grown;
      this.#jsSlots = new Int32Array(capacity);
      this.#jsScores = new Float64Array(capacity);
    }
    this.#prefilter?.ensure(capacity, this.#rowNos.length);
    const partitions = new Int32Array(capacity);
    partitions.set(this.#partitions.subarray(0, this.#rowNos.length));
    this.#partitions = partitions;
    this.#capacity = capacity;
  }

  /** Adds or replaces the unit vector of a record row. */
  upsert(rowNo: number, partitionNo: number, id: string, updatedAt: string, unit: Float32Array): void {
    if (unit.length !== this.dims) throw new RangeError("vector dimension mismatch");
    let slot = this.#slotOf.get(rowNo);
    if (slot !== undefined && this.#partitions[slot] !== partitionNo) {
      this.remove(rowNo);
      slot = undefined;
    }
    if (slot === undefined) {
      slot = this.#open(partitionNo);
      this.#rowNos[slot] = rowNo;
      this.#ids[slot] = id;
      this.#partitions[slot] = partitionNo;
      this.#slotOf.set(rowNo, slot);
    }
    this.#updated[slot] = updatedAt;
    this.#data.set(unit, slot * this.stride);
    this.#prefilter?.set(slot, unit);
  }

  /** Copies slot `from` (vector and facts) into slot `to`. */
  #move(from: number, to: number): void {
    this.#data.copyWithin(to * this.stride, from * this.stride, (from + 1) * this.stride);
    this.#prefilter?.move(from, to);
    const rowNo = this.#rowNos[from] as number;
    this.#rowNos[to] = rowNo;
    this.#partitions[to] = this.#partitions[from] as number;
    this.#ids[to] = this.#ids[from] as string;
    this.#updated[to] = this.#updated[from] as string;
    this.#slotOf.set(rowNo, to);
  }

  /**
   * A free slot at the end of the partition's range. The free slot starts at
   * the array's end; each later partition hands its first slot to its end, so
   * the free slot walks back to this partition: one row moved per partition
   * after it, never the rows themselves shifted.
   */
  #open(partitionNo: number): number {
    const n = this.#rowNos.length;
    this.#ensure(n + 1);
    this.#rowNos.push(0);
    this.#ids.push("");
    this.#updated.push("");
    let range = this.#ranges.get(partitionNo);
    if (range === undefined) {
      range = { start: n, end: n };
      this.#ranges.set(partitionNo, range);
      this.#order.push(partitionNo);
    }
    let free = n;
    for (let i = this.#order.length - 1; this.#order[i] !== partitionNo; i--) {
      const later = this.#ranges.get(this.#order[i] as number) as { start: number; end: number };
      if (later.start !== later.end) this.#move(later.start, free);
      free = later.start;
      later.start += 1;
      later.end += 1;
    }
    range.end += 1;
    return free;
  }

  /** Drops a row's vector: its partition's last slot fills the hole, and each later partition hands its last slot to its start. */
  remove(rowNo: number): void {
    const slot = this.#slotOf.get(rowNo);
    if (slot === undefined) return;
    const partitionNo = this.#partitions[slot] as number;
    const range = this.#ranges.get(partitionNo) as { start: number; end: number };
    let free = range.end - 1;
    if (slot !== free) this.#move(free, slot);
    range.end -= 1;
    const at = this.#order.indexOf(partitionNo);
    for (let i = at + 1; i < this.#order.length; i++) {
      const later = this.#ranges.get(this.#order[i] as number) as { start: number; end: number };
      if (later.start !== later.end) {
        this.#move(later.end - 1, free);
        free = later.end - 1;
      }
      later.start -= 1;
      later.end -= 1;
    }
    this.#slotOf.delete(rowNo);
    this.#rowNos.pop();
    this.#ids.pop();
    this.#updated.pop();
    if (range.start === range.end) {
      this.#ranges.delete(partitionNo);
      this.#order.splice(at, 1);
    }
  }

  /** The `depth` rows of `partitions` most similar to the unit query, best first (ties: newer, then smaller id). */
  top(query: Float32Array, partitions: ReadonlySet<number>, depth: number): VectorHit[] {
    if (query.length !== this.dims || depth < 1) return [];
    const kernel = this.#kernel;
    const list = kernel === null ? this.#jsSlots : kernel.slots();
    const ranges: { start: number; end: number }[] = [];
    let listed = 0;
    for (const partitionNo of partitions) {
      const range = this.#ranges.get(partitionNo);
      if (range !== undefined) {
        ranges.push(range);
        listed += range.end - range.start;
      }
    }
    let count = 0;
    if (this.#prefilter !== null && listed >= PREFILTER_FROM && depth * 16 <= listed) count = this.#prefilter.candidates(query, ranges, depth, list);
    else for (const range of ranges) for (let slot = range.start; slot < range.end; slot++) list[count++] = slot;
    this.#scored = count;
    let scores: Float32Array | Float64Array;
    if (kernel !== null) {
      kernel.query().set(query);
      scores = kernel.run(count);
    } else {
      scores = this.#jsScores;
      for (let k = 0; k < count; k++) scores[k] = dot(this.#data, (list[k] as number) * this.stride, query, this.dims);
    }
    const heap: Entry[] = [];
    const worse = (x: Entry, y: Entry) => x.score < y.score || (x.score === y.score && this.#after(x.slot, y.slot));
    for (let k = 0; k < count; k++) {
      const score = scores[k] as number;
      if (heap.length < depth) {
        heap.push({ slot: list[k] as number, score });
        siftUp(heap, heap.length - 1, worse);
        continue;
      }
      // Below the worst kept score it cannot enter: no entry is made for it (most slots of a large partition).
      const floor = (heap[0] as Entry).score;
      if (score < floor) continue;
      const entry = { slot: list[k] as number, score };
      if (worse(heap[0] as Entry, entry)) {
        heap[0] = entry;
        siftDown(heap, 0, worse);
      }
    }
    heap.sort((x, y) => (worse(x, y) ? 1 : worse(y, x) ? -1 : 0));
    return heap.map(({ slot, score }) => ({ rowNo: this.#rowNos[slot] as number, id: this.#ids[slot] as string, updatedAt: this.#updated[slot] as string, score }));
  }

  /** Whether slot `x` ranks after slot `y` at an equal score: older, or the same time and a larger id. */
  #after(x: number, y: number): boolean {
    const ux = this.#updated[x] as string;
    const uy = this.#updated[y] as string;
    if (ux !== uy) return ux < uy;
    return (this.#ids[x] as string) > (this.#ids[y] as string);
  }
}

function siftUp<T>(heap: T[], i: number, worse: (a: T, b: T) => boolean): void {
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (!worse(heap[i] as T, heap[parent] as T)) return;
    [heap[i], heap[parent]] = [heap[parent] as T, heap[i] as T];
    i = parent;
  }
}

function siftDown<T>(heap: T[], i: number, worse: (a: T, b: T) => boolean): void {
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let m = i;
    if (l < heap.length && worse(heap[l] as T, heap[m] as T)) m = l;
    if (r < heap.length && worse(heap[r] as T, heap[m] as T)) m = r;
    if (m === i) return;
    [heap[i], heap[m]] = [heap[m] as T, heap[i] as T];
    i = m;
  }
}
