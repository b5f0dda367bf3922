// The in-memory vector index: unit-length float32 vectors in one contiguous
// array, scored by brute-force cosine (a dot product of unit vectors). The
// partition filter runs before a single multiplication, so another
// partition's vectors are never scored. Loaded from the stored vectors at
// startup (no embedding call) and kept in step by the profile.

/** One scored vector: its record row, id and update time. */
export type VectorHit = { readonly rowNo: number; readonly id: string; readonly updatedAt: string; readonly score: number };

/** Scales `v` to unit length in place; false when it has no length or holds a non-finite number. */
export function normalize(v: Float32Array): boolean {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += (v[i] as number) * (v[i] as number);
  if (!Number.isFinite(sum) || sum === 0) return false;
  const scale = 1 / Math.sqrt(sum);
  for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) * scale;
  return true;
}

/** The dot product of `q` with row `slot` of `data` (both `dims` long). */
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

/** Vectors of one provider and dimension count. */
export class VectorIndex {
  readonly dims: number;
  #data: Float32Array;
  #rowNos: number[] = [];
  #partitions: number[] = [];
  #ids: string[] = [];
  #updated: string[] = [];
  readonly #slotOf = new Map<number, number>();

  constructor(dims: number, capacity = 1_024) {
    this.dims = dims;
    this.#data = new Float32Array(dims * Math.max(1, capacity));
  }

  get size(): number {
    return this.#rowNos.length;
  }

  has(rowNo: number): boolean {
    return this.#slotOf.has(rowNo);
  }

  /** Adds or replaces the unit vector of a record row. */
  upsert(rowNo: number, partitionNo: number, id: string, updatedAt: string, unit: Float32Array): void {
    if (unit.length !== this.dims) throw new RangeError("vector dimension mismatch");
    let slot = this.#slotOf.get(rowNo);
    if (slot === undefined) {
      slot = this.#rowNos.length;
      if ((slot + 1) * this.dims > this.#data.length) {
        const grown = new Float32Array(this.#data.length * 2);
        grown.set(this.#data);
        this.#data = grown;
      }
      this.#rowNos.push(rowNo);
      this.#partitions.push(partitionNo);
      this.#ids.push(id);
      this.#updated.push(updatedAt);
      this.#slotOf.set(rowNo, slot);
    } else {
      this.#updated[slot] = updatedAt;
    }
    this.#data.set(unit, slot * this.dims);
  }

  /** Drops a row's vector (the last slot moves into its place). */
  remove(rowNo: number): void {
    const slot = this.#slotOf.get(rowNo);
    if (slot === undefined) return;
    const last = this.#rowNos.length - 1;
    if (slot !== last) {
      this.#data.copyWithin(slot * this.dims, last * this.dims, (last + 1) * this.dims);
      this.#rowNos[slot] = this.#rowNos[last] as number;
      this.#partitions[slot] = this.#partitions[last] as number;
      this.#ids[slot] = this.#ids[last] as string;
      this.#updated[slot] = this.#updated[last] as string;
      this.#slotOf.set(this.#rowNos[slot] as number, slot);
    }
    this.#rowNos.pop();
    this.#partitions.pop();
    this.#ids.pop();
    this.#updated.pop();
    this.#slotOf.delete(rowNo);
  }

  /** The `depth` rows of `partitions` most similar to the unit query, best first (ties: newer, then smaller id). */
  top(query: Float32Array, partitions: ReadonlySet<number>, depth: number): VectorHit[] {
    if (query.length !== this.dims || depth < 1) return [];
    const heap: { slot: number; score: number }[] = [];
    const worse = (x: { slot: number; score: number }, y: { slot: number; score: number }) => x.score < y.score || (x.score === y.score && this.#after(x.slot, y.slot));
    for (let slot = 0; slot < this.#rowNos.length; slot++) {
      if (!partitions.has(this.#partitions[slot] as number)) continue;
      const entry = { slot, score: dot(this.#data, slot * this.dims, query, this.dims) };
      if (heap.length < depth) {
        heap.push(entry);
        siftUp(heap, heap.length - 1, worse);
      } else if (worse(heap[0] as typeof entry, entry)) {
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
