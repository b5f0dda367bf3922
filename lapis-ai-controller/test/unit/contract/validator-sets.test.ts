// enum, const and uniqueItems as set lookups over canonical JSON (issue 32
// point 5): the same answers as deep equality, on inputs large enough that a
// pairwise comparison would stall the service. Correctness only; the bench
// reports the time.
import assert from "node:assert/strict";
import { test } from "node:test";
import { canonicalJson, canonicalKey } from "../../../src/domain/canonical-json.ts";
import type { Schema } from "../../../src/domain/contract/schema.ts";
import { validate } from "../../../src/domain/contract/validate.ts";

test("AIC-TOOL-01 uniqueItems: JSON equality (key order, -0, nesting), one duplicate among 200k items is found", () => {
  const unique: Schema = { type: "array", uniqueItems: true };
  assert.equal(validate(unique, [1, "1", true, "true", null, "null", [1], { a: 1 }, [[1]], { a: [1] }]), null);
  assert.equal(validate(unique, [{ a: 1, b: 2 }, { b: 2, a: 1 }]), "");
  assert.equal(validate(unique, [0, -0]), "");
  assert.equal(validate(unique, [[1, [2, { x: null }]], [1, [2, { x: null }]]]), "");
  assert.equal(validate(unique, [{ a: [1, 2] }, { a: [2, 1] }]), null);
  const big = Array.from({ length: 200_000 }, (_, i) => i);
  assert.equal(validate(unique, big), null);
  assert.equal(validate(unique, [...big, 123_456]), "");
  const objects = Array.from({ length: 50_000 }, (_, i) => ({ id: i, tags: [String(i)] }));
  assert.equal(validate(unique, objects), null);
  assert.equal(validate(unique, [...objects, { tags: ["49999"], id: 49_999 }]), "");
  const strings = Array.from({ length: 100_000 }, (_, i) => `s${i}`);
  assert.equal(validate({ type: "object", properties: { list: unique } }, { list: strings }), null);
  assert.equal(validate({ type: "object", properties: { list: unique } }, { list: [...strings, "s7"] }), "list");
});

test("AIC-TOOL-01 enum and const: membership by JSON equality, 8k entries against 100k items", () => {
  const entries = Array.from({ length: 8_000 }, (_, i) => (i % 2 === 0 ? `v${i}` : { n: i, k: [i] }));
  const schema: Schema = { type: "array", items: { enum: entries } };
  const items = Array.from({ length: 100_000 }, (_, i) => entries[(i * 7) % entries.length]);
  assert.equal(validate(schema, items), null);
  assert.equal(validate(schema, [...items, { k: [1], n: 1 }]), null);
  assert.equal(validate(schema, [...items, { n: 1, k: [1], extra: true }]), `[${items.length}]`);
  assert.equal(validate(schema, [...items, "v1"]), `[${items.length}]`);
  assert.equal(validate({ enum: [1, "1", null, false] }, 1), null);
  assert.equal(validate({ enum: [1, "1", null, false] }, true), "");
  assert.equal(validate({ enum: [0] }, -0), null);
  assert.equal(validate({ enum: [{ a: 1 }] }, [{ a: 1 }]), "");
  assert.equal(validate({ const: { a: [1, { b: 2 }] } }, { a: [1, { b: 2 }] }), null);
  assert.equal(validate({ const: { a: [1, { b: 2 }] } }, { a: [1, { b: 3 }] }), "");
  assert.equal(validate({ const: [] }, {}), "");
  assert.equal(validate({ const: null }, null), null);
  assert.equal(validate({ const: null }, 0), "");
  assert.equal(validate({ const: "x" }, "x"), null);
  // A non-finite number (a literal such as 1e400 parses to Infinity) is equal to nothing.
  assert.equal(validate({ enum: [null] }, Number.POSITIVE_INFINITY), "");
  assert.equal(validate({ type: "array", uniqueItems: true }, [Number.POSITIVE_INFINITY, null]), null);
});

test("AIC-TOOL-01 canonical JSON walks without recursion: 200k-deep values serialize, output unchanged", () => {
  let deep: unknown = 1;
  for (let i = 0; i < 200_000; i++) deep = i % 2 === 0 ? [deep] : { d: deep };
  const text = canonicalJson(deep);
  assert.equal(text.length, 200_000 + 100_000 * 5 + 1 + 100_000 * 1);
  assert.equal(validate({ const: { d: [1] } }, deep), "");
  assert.equal(validate({ type: "array", uniqueItems: true }, [deep, deep]), "");
  assert.equal(canonicalJson({ b: [1, "x", null, { d: undefined, c: true }], a: -0 }), '{"a":0,"b":[1,"x",null,{"c":true}]}');
  assert.equal(canonicalJson([undefined]), "[null]");
  const shared = { s: 1 };
  assert.equal(canonicalJson({ x: shared, y: [shared] }), '{"x":{"s":1},"y":[{"s":1}]}');
  const cyclic: { self?: unknown } = {};
  cyclic.self = cyclic;
  assert.throws(() => canonicalJson(cyclic), /cycle/);
  assert.throws(() => canonicalJson({ n: Number.NaN }), /non-finite/);
  assert.throws(() => canonicalJson({ f: () => 1 }), /unsupported function/);
  assert.equal(canonicalKey(cyclic), undefined);
});

// The text canonical JSON always had: keys sorted by code unit, no whitespace (the reference the fast paths must match).
function reference(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((v) => reference(v === undefined ? null : v)).join(",")}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).filter((k) => record[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${reference(record[k])}`).join(",")}}`;
}

test("AIC-TOOL-01 canonical JSON: sorted, unsorted, integer-like, __proto__ and non-ASCII keys give the reference text", () => {
  let x = 12345;
  const next = () => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648);
  const keys = ["a", "b", "B", "10", "9", "__proto__", "é", "z\u{1F600}", "constructor", "", "aa"];
  const gen = (depth: number): unknown => {
    const r = next();
    if (depth > 4 || r < 0.3) return [1, -0, 2.5, "s\"\n", true, null, 1e21][Math.floor(next() * 7)];
    if (r < 0.6) return Array.from({ length: Math.floor(next() * 4) }, () => gen(depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = Math.floor(next() * 5); i > 0; i--) o[keys[Math.floor(next() * keys.length)] as string] = gen(depth + 1);
    return JSON.parse(JSON.stringify(o)) as unknown;
  };
  for (let i = 0; i < 3000; i++) {
    const v = gen(0);
    assert.equal(canonicalJson(v), reference(v));
  }
  const proto = JSON.parse('{"__proto__":{"b":1,"a":2},"x":[{"d":1,"c":2}]}') as unknown;
  assert.equal(canonicalJson(proto), '{"__proto__":{"a":2,"b":1},"x":[{"c":2,"d":1}]}');
  assert.equal(canonicalJson({ when: new Date(0) }), '{"when":{}}');
});
