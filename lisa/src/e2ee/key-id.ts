// A canonical byte form of an IndexedDB key, so equal keys (by IndexedDB's
// comparison) give equal bytes: the crypto store file addresses a record by a
// keyed hash of these bytes and never keeps the key itself in clear.

import type { IdbKey } from "./idb-types.ts";

const NUMBER = 1;
const DATE = 2;
const STRING = 3;
const BINARY = 4;
const ARRAY = 5;

function u32(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value);
  return out;
}

function f64(value: number): Buffer {
  const out = Buffer.alloc(8);
  // -0 and 0 are the same key.
  out.writeDoubleBE(value === 0 ? 0 : value);
  return out;
}

function parts(key: unknown, out: Buffer[]): void {
  if (typeof key === "number") {
    out.push(Buffer.of(NUMBER), f64(key));
  } else if (key instanceof Date) {
    out.push(Buffer.of(DATE), f64(key.getTime()));
  } else if (typeof key === "string") {
    const units = Buffer.from(key, "utf16le");
    out.push(Buffer.of(STRING), u32(units.length), units);
  } else if (key instanceof ArrayBuffer) {
    out.push(Buffer.of(BINARY), u32(key.byteLength), Buffer.from(key));
  } else if (ArrayBuffer.isView(key)) {
    out.push(Buffer.of(BINARY), u32(key.byteLength), Buffer.from(key.buffer, key.byteOffset, key.byteLength));
  } else if (Array.isArray(key)) {
    out.push(Buffer.of(ARRAY), u32(key.length));
    for (const item of key as readonly unknown[]) parts(item, out);
  } else {
    // IndexedDB itself refuses such keys before a request succeeds.
    throw new TypeError(`not an IndexedDB key: ${typeof key}`);
  }
}

/** The canonical bytes of `key`. Throws on a value that is not a valid key (a bug: IndexedDB rejected it first). */
export function canonicalKey(key: IdbKey | unknown): Buffer {
  const out: Buffer[] = [];
  parts(key, out);
  return Buffer.concat(out);
}
