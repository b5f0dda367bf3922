// Reads a safetensors file held in memory: an 8-byte little-endian header
// length, a JSON header naming each tensor's dtype, shape and byte range, then
// the raw data. Only what the embedding model needs (F32 tensors by name).

export type SafeTensor = { readonly dtype: string; readonly shape: readonly number[]; readonly bytes: Uint8Array };

/** The tensors of one file by name; null when the file is not a well-formed safetensors file. */
export function parseSafetensors(file: Uint8Array): ReadonlyMap<string, SafeTensor> | null {
  if (file.length < 8) return null;
  const headerLength = Number(new DataView(file.buffer, file.byteOffset, 8).getBigUint64(0, true));
  if (headerLength <= 0 || 8 + headerLength > file.length) return null;
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder().decode(file.subarray(8, 8 + headerLength)));
  } catch {
    return null;
  }
  if (typeof header !== "object" || header === null) return null;
  const data = file.subarray(8 + headerLength);
  const tensors = new Map<string, SafeTensor>();
  for (const [name, entry] of Object.entries(header as Record<string, unknown>)) {
    if (name === "__metadata__") continue;
    if (typeof entry !== "object" || entry === null) return null;
    const { dtype, shape, data_offsets: offsets } = entry as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    if (typeof dtype !== "string" || !Array.isArray(shape) || !Array.isArray(offsets) || offsets.length !== 2) return null;
    const [begin, end] = offsets as unknown[];
    if (typeof begin !== "number" || typeof end !== "number" || begin < 0 || end < begin || end > data.length) return null;
    if (!shape.every((d) => Number.isInteger(d) && d >= 0)) return null;
    tensors.set(name, { dtype, shape: shape as number[], bytes: data.subarray(begin, end) });
  }
  return tensors;
}

/** A float32 tensor of exactly `shape`, or null when it is missing or differs. */
export function f32(tensors: ReadonlyMap<string, SafeTensor>, name: string, shape: readonly number[]): SafeTensor | null {
  const t = tensors.get(name);
  if (t === undefined || t.dtype !== "F32") return null;
  if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) return null;
  if (t.bytes.length !== shape.reduce((a, b) => a * b, 4)) return null;
  return t;
}

/** The float32 values of a tensor's bytes (copied into a fresh buffer, so the values are aligned). */
export function f32Values(t: SafeTensor): Float32Array {
  // Not `bytes.slice()`: on a node Buffer that is a view of the same memory, not a copy.
  const copy = new Uint8Array(t.bytes.length);
  copy.set(t.bytes);
  return new Float32Array(copy.buffer);
}
