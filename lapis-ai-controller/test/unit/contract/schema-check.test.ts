// The tool schema check (issue 32 point 5): deep documents are refused as
// invalid_params (never a stack overflow), the metaschema's rules for the
// keywords of the subset hold, numbers the subset cannot carry are named,
// and the number of subschemas that may look at one place is bounded.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { JsonValue } from "../../../src/domain/contract/schema.ts";
import { checkSchema, SCHEMA_DIALECT } from "../../../src/domain/contract/schema-check.ts";
import { checkToolDefinitions, TOOL_LIMIT_CAPS, TOOL_LIMIT_DEFAULTS, TOOL_SCHEMA_BOUNDS } from "../../../src/domain/contract/tools.ts";
import { explain } from "../../../src/domain/contract/validate.ts";
import { transportLimits } from "../../../src/transport/options.ts";

type Obj = { readonly [key: string]: JsonValue };

function refusal(inputSchema: Obj, limits = TOOL_LIMIT_DEFAULTS): { where?: string; rule?: string } | null {
  const r = checkToolDefinitions([{ name: "t", description: "d", inputSchema }], limits);
  return r.ok ? null : { where: r.error.where, rule: r.error.rule };
}

function nested(depth: number, leaf: JsonValue = 1): JsonValue {
  let v: JsonValue = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : { d: v };
  return v;
}

test("AIC-TOOL-03 a 200k-deep default, example, enum or const is invalid_params json_too_deep, not a stack overflow", () => {
  const deep = nested(200_000);
  for (const key of ["default", "const"] as const) {
    const r = refusal({ type: "object", properties: { a: { [key]: deep } } });
    assert.equal(r?.rule, "json_too_deep", key);
    assert.match(String(r?.where), new RegExp(`^tools\\[0\\]\\.inputSchema\\.properties\\.a\\.${key}(\\.d|\\[0\\])+$`));
  }
  assert.equal(refusal({ type: "object", examples: [deep] })?.rule, "json_too_deep");
  assert.equal(refusal({ type: "object", properties: { a: { enum: [1, deep] } } })?.rule, "json_too_deep");
  // Within the limit the same shape passes; the limit is the whole document's nesting.
  assert.equal(refusal({ type: "object", default: nested(40) as Obj }), null);
  assert.equal(refusal({ type: "object", default: nested(70) as Obj })?.rule, "json_too_deep");
});

test("AIC-TOOL-03 the nesting limit is configurable in limits.protocol and capped in code", () => {
  const shallow = transportLimits({ maxToolSchemaDepth: 8 });
  assert.ok(shallow.ok && shallow.value.maxToolSchemaDepth === 8);
  assert.equal(refusal({ type: "object", default: nested(10) as Obj }, { ...TOOL_LIMIT_DEFAULTS, maxToolSchemaDepth: 8 })?.rule, "json_too_deep");
  assert.equal(refusal({ type: "object", default: nested(10) as Obj }), null);
  const over = transportLimits({ maxToolSchemaDepth: TOOL_LIMIT_CAPS.maxToolSchemaDepth + 1 });
  assert.equal(over.ok ? null : over.error.where, "transport.maxToolSchemaDepth");
  // A limit above the cap handed in directly is still held to the cap.
  const big = { ...TOOL_LIMIT_DEFAULTS, maxToolSchemaDepth: 1_000_000, maxToolSchemaBytes: TOOL_LIMIT_CAPS.maxToolSchemaBytes };
  assert.equal(refusal({ type: "object", default: nested(TOOL_LIMIT_CAPS.maxToolSchemaDepth + 2) as Obj }, big)?.rule, "json_too_deep");
  const defaults = transportLimits({});
  assert.ok(defaults.ok && defaults.value.maxToolSchemaDepth === TOOL_LIMIT_DEFAULTS.maxToolSchemaDepth);
});

test("AIC-TOOL-04 duplicate required and type entries, non-array examples and other $schema dialects are refused", () => {
  assert.deepEqual(refusal({ type: "object", required: ["a", "a"] }), { where: "tools[0].inputSchema.required", rule: "required_duplicate" });
  assert.deepEqual(refusal({ type: "object", properties: { a: { type: ["string", "string"] } } }), { where: "tools[0].inputSchema.properties.a.type", rule: "type_duplicate" });
  assert.deepEqual(refusal({ type: "object", examples: { a: 1 } }), { where: "tools[0].inputSchema.examples", rule: "examples_invalid" });
  assert.deepEqual(refusal({ type: "object", examples: "x" }), { where: "tools[0].inputSchema.examples", rule: "examples_invalid" });
  assert.deepEqual(refusal({ type: "object", $schema: "http://json-schema.org/draft-07/schema#" }), { where: "tools[0].inputSchema.$schema", rule: "schema_dialect" });
  assert.deepEqual(refusal({ type: "object", $schema: 5 }), { where: "tools[0].inputSchema.$schema", rule: "schema_dialect" });
  assert.deepEqual(refusal({ type: "object", properties: { a: { $schema: SCHEMA_DIALECT } } }), { where: "tools[0].inputSchema.properties.a.$schema", rule: "schema_dialect" });
  assert.equal(refusal({ type: "object", $schema: SCHEMA_DIALECT, examples: [{}], required: ["a", "b"], properties: { a: { type: ["string", "null"] } } }), null);
  assert.equal(refusal({ type: "object", $schema: `${SCHEMA_DIALECT}#` }), null);
  assert.deepEqual(refusal({ type: "object", properties: { a: { type: [] } } }), { where: "tools[0].inputSchema.properties.a.type", rule: "type_invalid" });
  assert.deepEqual(refusal({ type: "object", anyOf: [] }), { where: "tools[0].inputSchema.anyOf", rule: "keyword_invalid" });
  assert.deepEqual(refusal({ type: "object", properties: { a: { $ref: "#" } } }), { where: "tools[0].inputSchema.properties.a.$ref", rule: "keyword_unknown" });
  assert.deepEqual(refusal({ type: "object", properties: { a: true } }), { where: "tools[0].inputSchema.properties.a", rule: "schema_not_object" });
});

test("AIC-TOOL-04 numbers: an overflowing literal is refused in a schema and named in a value; integers stop at 2^53", () => {
  const inf = JSON.parse('{"type":"object","properties":{"a":{"type":"number","maximum":1e400}}}') as Obj;
  assert.deepEqual(refusal(inf), { where: "tools[0].inputSchema.properties.a.maximum", rule: "number_not_finite" });
  assert.equal(refusal(JSON.parse('{"type":"object","default":{"x":[-1e999]}}') as Obj)?.rule, "number_not_finite");
  assert.deepEqual(refusal({ type: "object", properties: { a: { type: "string", maxLength: 2 ** 60 } } }), { where: "tools[0].inputSchema.properties.a.maxLength", rule: "count_invalid" });
  const schema = { type: "object", properties: { n: { type: "integer" }, x: { type: "number" }, m: { type: ["integer", "string"] } } } as const;
  assert.deepEqual(explain(schema, JSON.parse('{"n":9007199254740993}')), { path: "n", rule: "integer_unsafe" });
  assert.deepEqual(explain(schema, { n: 2 ** 53 - 1 }), null);
  assert.deepEqual(explain(schema, JSON.parse('{"x":1e400}')), { path: "x", rule: "number_not_finite" });
  assert.deepEqual(explain(schema, JSON.parse('{"n":-1e400}')), { path: "n", rule: "number_not_finite" });
  assert.deepEqual(explain(schema, { m: 2 ** 60 }), { path: "m", rule: "integer_unsafe" });
  assert.deepEqual(explain(schema, { n: 1.5 }), { path: "n", rule: "type" });
  assert.deepEqual(explain(schema, { x: 1e300 }), null);
  assert.deepEqual(explain(schema, { x: "1" }), { path: "x", rule: "type" });
});

test("AIC-TOOL-04 value failures name the keyword that refused, at the key path", () => {
  const schema = {
    type: "object", required: ["id"], additionalProperties: false, maxProperties: 4,
    properties: { id: { type: "string", pattern: "^[a-z]+$", maxLength: 4, minLength: 2 }, tags: { type: "array", items: { enum: ["a", "b"] }, uniqueItems: true, maxItems: 3 }, k: { const: 1 } },
  } as const;
  assert.deepEqual(explain(schema, {}), { path: "id", rule: "required" });
  assert.deepEqual(explain(schema, { id: "abcde" }), { path: "id", rule: "maxLength" });
  assert.deepEqual(explain(schema, { id: "a" }), { path: "id", rule: "minLength" });
  assert.deepEqual(explain(schema, { id: "ab1" }), { path: "id", rule: "pattern" });
  assert.deepEqual(explain(schema, { id: "ab", zz: 1 }), { path: "zz", rule: "additionalProperties" });
  assert.deepEqual(explain(schema, { id: "ab", tags: ["a", "a"] }), { path: "tags", rule: "uniqueItems" });
  assert.deepEqual(explain(schema, { id: "ab", tags: ["a", "c"] }), { path: "tags[1]", rule: "enum" });
  assert.deepEqual(explain(schema, { id: "ab", tags: ["a", "b", "a", "b"] }), { path: "tags", rule: "maxItems" });
  assert.deepEqual(explain(schema, { id: "ab", k: 2 }), { path: "k", rule: "const" });
  // Items judged by a leaf schema take a tight loop: the same answers, at the same index.
  assert.deepEqual(explain({ type: "array", items: { type: "integer" } }, [1, 2, 2 ** 60]), { path: "[2]", rule: "integer_unsafe" });
  assert.deepEqual(explain({ type: "array", items: { type: "string", pattern: "^a+$", maxLength: 3 } }, ["a", "aaaa"]), { path: "[1]", rule: "maxLength" });
  assert.deepEqual(explain({ type: "array", items: { type: "string", pattern: "^a+$" } }, ["a", "b"]), { path: "[1]", rule: "pattern" });
  assert.deepEqual(explain({ type: "array", items: { type: "number", minimum: 0, maximum: 1 } }, [0, 1, -1]), { path: "[2]", rule: "minimum" });
  assert.deepEqual(explain({ type: "array", items: { enum: [1, { a: 1 }] } }, [1, { a: 1 }, { a: 2 }]), { path: "[2]", rule: "enum" });
  assert.deepEqual(explain({ type: "array", items: { type: "integer" }, uniqueItems: true }, [1, 2, 1]), { path: "", rule: "uniqueItems" });
  assert.deepEqual(explain({ type: "array", items: {} }, [{ deep: [1] }, "x", null]), null);
});

test("AIC-TOOL-04 at most 8 subschemas may look at one place of a value through anyOf and oneOf", () => {
  const branch = { type: "array", items: { type: "integer" } } as const;
  const wide = (n: number): Obj => ({ type: "object", properties: { a: { anyOf: Array.from({ length: n }, () => branch) } } });
  // The property's own node plus 7 branches look at the array: 8.
  assert.equal(refusal(wide(7)), null);
  assert.deepEqual(refusal(wide(8)), { where: "tools[0].inputSchema", rule: "schema_too_wide" });
  // Branches at different depths of the value do not add up; nested ones do.
  const spread: Obj = { type: "object", properties: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`p${i}`, { anyOf: [{ type: "string" }, { type: "null" }] }])) };
  assert.equal(refusal(spread), null);
  const nestedWide: Obj = { type: "object", properties: { a: { anyOf: [{ anyOf: [branch, branch, branch] }, { oneOf: [branch, branch, branch] }] } } };
  assert.deepEqual(refusal(nestedWide), { where: "tools[0].inputSchema", rule: "schema_too_wide" });
  assert.equal(checkSchema({ anyOf: [{}, {}] }, { ...TOOL_SCHEMA_BOUNDS, maxApplicators: 2 })?.rule, "schema_too_wide");
  assert.equal(checkSchema({ anyOf: [{}, {}] }, { ...TOOL_SCHEMA_BOUNDS, maxApplicators: 3 }), null);
});
