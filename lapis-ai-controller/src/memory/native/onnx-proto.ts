// A minimal writer of the ONNX model format (protocol buffers, the subset of
// onnx.proto a static inference graph needs): ModelProto, GraphProto,
// NodeProto, AttributeProto, TensorProto with raw little-endian data, and
// ValueInfoProto. A message is kept as a list of byte chunks with a known
// length, so the weights (tens of MB) are copied exactly once, into the
// final buffer.

/** Protobuf bytes not yet joined: chunks in order and their total length. */
export type Chunks = { readonly parts: Uint8Array[]; length: number };

const WIRE_VARINT = 0;
const WIRE_FIXED32 = 5;
const WIRE_BYTES = 2;

/** ONNX TensorProto.DataType values used here. */
export const ONNX_FLOAT = 1;
export const ONNX_INT64 = 7;

const ATTR_FLOAT = 1;
const ATTR_INT = 2;
const ATTR_INTS = 7;

const encoder = new TextEncoder();

function chunks(): Chunks {
  return { parts: [], length: 0 };
}

function push(out: Chunks, bytes: Uint8Array): void {
  out.parts.push(bytes);
  out.length += bytes.length;
}

/** A varint of a non-negative integer or a bigint (negative int64 values are written as 10-byte two's complement). */
function varint(value: number | bigint): Uint8Array {
  let v = BigInt.asUintN(64, BigInt(value));
  const bytes: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    bytes.push(byte);
  } while (v !== 0n);
  return Uint8Array.from(bytes);
}

function tag(out: Chunks, field: number, wire: number): void {
  push(out, varint((field << 3) | wire));
}

function intField(out: Chunks, field: number, value: number | bigint): void {
  tag(out, field, WIRE_VARINT);
  push(out, varint(value));
}

function floatField(out: Chunks, field: number, value: number): void {
  tag(out, field, WIRE_FIXED32);
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setFloat32(0, value, true);
  push(out, bytes);
}

function bytesField(out: Chunks, field: number, bytes: Uint8Array): void {
  tag(out, field, WIRE_BYTES);
  push(out, varint(bytes.length));
  push(out, bytes);
}

function stringField(out: Chunks, field: number, value: string): void {
  bytesField(out, field, encoder.encode(value));
}

function messageField(out: Chunks, field: number, message: Chunks): void {
  tag(out, field, WIRE_BYTES);
  push(out, varint(message.length));
  for (const part of message.parts) push(out, part);
}

/** A node attribute: an int, a float or a list of ints. */
export type Attribute =
  | { readonly name: string; readonly int: number }
  | { readonly name: string; readonly float: number }
  | { readonly name: string; readonly ints: readonly number[] };

/** One graph node (an operator of the default ONNX domain). */
export type GraphNode = {
  readonly op: string;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  readonly name: string;
  readonly attributes?: readonly Attribute[];
};

/** A named constant tensor (an initializer) with its little-endian bytes. */
export type Initializer = {
  readonly name: string;
  readonly dataType: number;
  readonly dims: readonly number[];
  readonly raw: Uint8Array;
};

/** A graph input or output: element type and dims (a string names a symbolic dimension). */
export type ValueInfo = { readonly name: string; readonly elemType: number; readonly dims: readonly (number | string)[] };

function attribute(attr: Attribute): Chunks {
  const out = chunks();
  stringField(out, 1, attr.name);
  if ("int" in attr) {
    intField(out, 3, attr.int);
    intField(out, 20, ATTR_INT);
  } else if ("float" in attr) {
    floatField(out, 2, attr.float);
    intField(out, 20, ATTR_FLOAT);
  } else {
    for (const v of attr.ints) intField(out, 8, v);
    intField(out, 20, ATTR_INTS);
  }
  return out;
}

function node(n: GraphNode): Chunks {
  const out = chunks();
  for (const input of n.inputs) stringField(out, 1, input);
  for (const output of n.outputs) stringField(out, 2, output);
  stringField(out, 3, n.name);
  stringField(out, 4, n.op);
  for (const attr of n.attributes ?? []) messageField(out, 5, attribute(attr));
  return out;
}

function tensor(t: Initializer): Chunks {
  const out = chunks();
  for (const d of t.dims) intField(out, 1, d);
  intField(out, 2, t.dataType);
  stringField(out, 8, t.name);
  bytesField(out, 9, t.raw);
  return out;
}

function valueInfo(v: ValueInfo): Chunks {
  const shape = chunks();
  for (const d of v.dims) {
    const dim = chunks();
    if (typeof d === "number") intField(dim, 1, d);
    else stringField(dim, 2, d);
    messageField(shape, 1, dim);
  }
  const tensorType = chunks();
  intField(tensorType, 1, v.elemType);
  messageField(tensorType, 2, shape);
  const type = chunks();
  messageField(type, 1, tensorType);
  const out = chunks();
  stringField(out, 1, v.name);
  messageField(out, 2, type);
  return out;
}

/** A whole model: one graph, the default operator set at `opset`. */
export type ModelSpec = {
  readonly producer: string;
  readonly graphName: string;
  readonly opset: number;
  readonly nodes: readonly GraphNode[];
  readonly initializers: readonly Initializer[];
  readonly inputs: readonly ValueInfo[];
  readonly outputs: readonly ValueInfo[];
};

/** IR version 8 (ONNX 1.10+), which opset 17 requires at least. */
const IR_VERSION = 8;

/** Serializes a model to ONNX protobuf bytes; the same spec always gives the same bytes. */
export function writeModel(spec: ModelSpec): Uint8Array {
  const graph = chunks();
  for (const n of spec.nodes) messageField(graph, 1, node(n));
  stringField(graph, 2, spec.graphName);
  for (const t of spec.initializers) messageField(graph, 5, tensor(t));
  for (const v of spec.inputs) messageField(graph, 11, valueInfo(v));
  for (const v of spec.outputs) messageField(graph, 12, valueInfo(v));
  const opset = chunks();
  stringField(opset, 1, "");
  intField(opset, 2, spec.opset);
  const model = chunks();
  intField(model, 1, IR_VERSION);
  stringField(model, 2, spec.producer);
  messageField(model, 7, graph);
  messageField(model, 8, opset);
  const bytes = new Uint8Array(model.length);
  let at = 0;
  for (const part of model.parts) {
    bytes.set(part, at);
    at += part.length;
  }
  return bytes;
}

/** Little-endian bytes of float32 values. */
export function floatBytes(values: Float32Array): Uint8Array {
  return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
}

/** Little-endian bytes of int64 values. */
export function int64Bytes(values: readonly number[]): Uint8Array {
  return new Uint8Array(BigInt64Array.from(values, (v) => BigInt(v)).buffer);
}
