// A validator for the JSON Schema subset of schema.ts. Our own rather than a
// library: the subset is small, the same code runs in the service, the
// bridge and the browser-safe SDK, it compiles no code from schemas (no
// `new Function`), and its cost is linear in the value: the walk follows the
// schema (at most TOOL_SCHEMA_BOUNDS.maxDepth levels for a tool's), enum,
// const and uniqueItems are set lookups (json-sets.ts), and a tool's
// patterns passed the rules of pattern-rules.ts at registration. A failure
// names a key path and the keyword (rule) that refused, never a value.
import { allDistinct, enumSet, equalsConst, type KeyCache } from "./json-sets.ts";
import type { Schema, SchemaType } from "./schema.ts";

/** The first failure of a value: its key path ("" for the root) and the rule that refused it. */
export interface ValueFailure {
  readonly path: string;
  /** The refusing keyword (`type`, `pattern`, …), or `integer_unsafe` / `number_not_finite` for numbers the subset does not take. */
  readonly rule: string;
}

const patterns = new Map<string, RegExp | null>();

/** The compiled `u`-flag RegExp of a pattern, or null when it does not compile (cached, at most 1024). */
export function regex(pattern: string): RegExp | null {
  let compiled = patterns.get(pattern);
  if (compiled === undefined) {
    try {
      compiled = new RegExp(pattern, "u");
    } catch {
      compiled = null;
    }
    if (patterns.size < 1024) patterns.set(pattern, compiled);
  }
  return compiled;
}

function isObject(value: unknown): value is { readonly [key: string]: unknown } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function typeMatches(type: SchemaType, value: unknown): boolean {
  switch (type) {
    case "object": return isObject(value);
    case "array": return Array.isArray(value);
    case "string": return typeof value === "string";
    // Above 2^53 a parsed integer may already differ from the text that was sent.
    case "integer": return typeof value === "number" && Number.isSafeInteger(value);
    // A literal such as 1e400 parses to Infinity, which JSON cannot carry on.
    case "number": return typeof value === "number" && Number.isFinite(value);
    case "boolean": return typeof value === "boolean";
    case "null": return value === null;
  }
}

/** Why a value matched none of `types`: a number the subset refuses is named as such. */
function typeRule(types: readonly SchemaType[], value: unknown): string {
  if (typeof value !== "number" || !(types.includes("integer") || types.includes("number"))) return "type";
  if (!Number.isFinite(value)) return "number_not_finite";
  return Number.isInteger(value) && types.includes("integer") ? "integer_unsafe" : "type";
}

/** The walk's position: a prefix, then keys and indexes; rendered as a path only on failure. */
interface Trail {
  readonly prefix: string;
  readonly parts: (string | number)[];
}

function render(trail: Trail): string {
  let path = trail.prefix;
  for (const part of trail.parts) {
    if (typeof part === "number") path += `[${part}]`;
    else path = path === "" ? part.slice(0, 64) : `${path}.${part.slice(0, 64)}`;
  }
  return path;
}

const fail = (at: Trail, rule: string): ValueFailure => ({ path: render(at), rule });

function within(schema: Schema, value: unknown, at: Trail, part: string | number, cache: KeyCache): ValueFailure | null {
  at.parts.push(part);
  const failed = check(schema, value, at, cache);
  at.parts.pop();
  return failed;
}

function failAt(at: Trail, part: string, rule: string): ValueFailure {
  at.parts.push(part);
  const failed = fail(at, rule);
  at.parts.pop();
  return failed;
}

function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function checkString(schema: Schema, value: string, at: Trail): ValueFailure | null {
  // maxLength first: a pattern never runs on a string longer than its schema allows.
  if (schema.maxLength !== undefined && value.length > schema.maxLength && codePoints(value) > schema.maxLength) return fail(at, "maxLength");
  if (schema.minLength !== undefined && codePoints(value) < schema.minLength) return fail(at, "minLength");
  if (schema.pattern !== undefined && regex(schema.pattern)?.test(value) !== true) return fail(at, "pattern");
  return null;
}

const STRUCTURAL = ["anyOf", "oneOf", "items", "properties", "additionalProperties", "required", "maxProperties", "minItems", "maxItems", "uniqueItems"] as const;

/**
 * A leaf schema (one that judges a value by itself alone: no subschemas, no
 * array or object keywords) read once into one fixed shape, so the loop over
 * a large array reads the same few fields of the same kind of object at every
 * element, whichever keywords the schema has: fast at V8's Maglev tier too,
 * where Deno's serve stops (P-DNO-05), not only after TurboFan has specialised
 * the loop to one schema's shape. Absent bounds are the infinities.
 */
interface LeafPlan {
  readonly schema: Schema;
  readonly hasConst: boolean;
  readonly hasEnum: boolean;
  /** The one type, when `type` names one. */
  readonly type: SchemaType | null;
  /** The types, when `type` is a list. */
  readonly types: readonly SchemaType[] | null;
  readonly minimum: number;
  readonly maximum: number;
  /** maxLength, minLength or pattern is set. */
  readonly strings: boolean;
  /** The schema is `type: "integer"` or `type: "number"` with at most bounds: a number passes by the inline test of `checkArray`. */
  readonly number: "integer" | "number" | null;
}

const plans = new WeakMap<Schema, LeafPlan | null>();

/** The leaf plan of `schema`, or null when it is not a leaf (cached per schema object). */
function leafPlan(schema: Schema): LeafPlan | null {
  let plan = plans.get(schema);
  if (plan === undefined) {
    plan = STRUCTURAL.some((k) => schema[k] !== undefined) ? null : {
      schema,
      hasConst: schema.const !== undefined,
      hasEnum: schema.enum !== undefined,
      type: typeof schema.type === "string" ? schema.type : null,
      types: Array.isArray(schema.type) ? schema.type : null,
      minimum: schema.minimum ?? Number.NEGATIVE_INFINITY,
      maximum: schema.maximum ?? Number.POSITIVE_INFINITY,
      strings: schema.maxLength !== undefined || schema.minLength !== undefined || schema.pattern !== undefined,
      number: schema.const === undefined && schema.enum === undefined && (schema.type === "integer" || schema.type === "number") ? schema.type : null,
    };
    plans.set(schema, plan);
  }
  return plan;
}

function checkArray(schema: Schema, value: readonly unknown[], at: Trail, cache: KeyCache): ValueFailure | null {
  if (schema.maxItems !== undefined && value.length > schema.maxItems) return fail(at, "maxItems");
  if (schema.minItems !== undefined && value.length < schema.minItems) return fail(at, "minItems");
  const plan = schema.items === undefined ? null : leafPlan(schema.items);
  if (plan !== null) {
    // The common large case, one tight loop: the same checks as `check`, with no position kept until one fails.
    // A number a numeric leaf takes passes by an inline test (Maglev does not inline `leafRule`); anything else asks `leafRule`.
    const { minimum, maximum, number } = plan;
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      if (number !== null && typeof item === "number" && item >= minimum && item <= maximum && (number === "integer" ? Number.isSafeInteger(item) : Number.isFinite(item))) continue;
      if (leafRule(plan, item, cache) === null) continue;
      const failed = within(plan.schema, item, at, i, cache);
      if (failed !== null) return failed;
    }
  } else if (schema.items !== undefined) {
    for (let i = 0; i < value.length; i++) {
      const failed = within(schema.items, value[i], at, i, cache);
      if (failed !== null) return failed;
    }
  }
  if (schema.uniqueItems === true && !allDistinct(value, cache)) return fail(at, "uniqueItems");
  return null;
}

function checkObject(schema: Schema, value: { readonly [key: string]: unknown }, at: Trail, cache: KeyCache): ValueFailure | null {
  const keys = Object.keys(value);
  if (schema.maxProperties !== undefined && keys.length > schema.maxProperties) return fail(at, "maxProperties");
  for (const key of schema.required ?? []) if (!Object.hasOwn(value, key) || value[key] === undefined) return failAt(at, key, "required");
  for (const key of keys) {
    const declared = schema.properties !== undefined && Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined;
    const sub = declared ?? schema.additionalProperties;
    if (sub === false) return failAt(at, key, "additionalProperties");
    if (sub === undefined || sub === true || value[key] === undefined) continue;
    const failed = within(sub, value[key], at, key, cache);
    if (failed !== null) return failed;
  }
  return null;
}

/** Validates `value` against `schema`; returns null, or the key path of the first failure ("" for the root). */
export function validate(schema: Schema, value: unknown, path = ""): string | null {
  return check(schema, value, { prefix: path, parts: [] }, new Map())?.path ?? null;
}

/** Like `validate`, with the rule that refused. */
export function explain(schema: Schema, value: unknown): ValueFailure | null {
  return check(schema, value, { prefix: "", parts: [] }, new Map());
}

/** The rule a leaf schema refuses `value` by, or null: `check`'s rules in `check`'s order, read from its plan. */
function leafRule(plan: LeafPlan, value: unknown, cache: KeyCache): string | null {
  if (plan.hasConst && !equalsConst(plan.schema.const, value, cache)) return "const";
  if (plan.hasEnum && !enumSet(plan.schema.enum as readonly unknown[]).has(value, cache)) return "enum";
  if (plan.type !== null ? !typeMatches(plan.type, value) : plan.types !== null && !plan.types.some((t) => typeMatches(t, value))) return "type";
  if (typeof value === "number") {
    if (value < plan.minimum) return "minimum";
    if (value > plan.maximum) return "maximum";
  } else if (plan.strings && typeof value === "string") {
    return checkString(plan.schema, value, { prefix: "", parts: [] })?.rule ?? null;
  }
  return null;
}

function check(schema: Schema, value: unknown, at: Trail, cache: KeyCache): ValueFailure | null {
  if (schema.const !== undefined && !equalsConst(schema.const, value, cache)) return fail(at, "const");
  if (schema.enum !== undefined && !enumSet(schema.enum).has(value, cache)) return fail(at, "enum");
  const type = schema.type;
  if (type !== undefined && !(typeof type === "string" ? typeMatches(type, value) : type.some((t) => typeMatches(t, value)))) {
    return fail(at, typeRule(typeof type === "string" ? [type] : type, value));
  }
  if (schema.anyOf !== undefined && !schema.anyOf.some((s) => check(s, value, at, cache) === null)) return fail(at, "anyOf");
  if (schema.oneOf !== undefined && schema.oneOf.filter((s) => check(s, value, at, cache) === null).length !== 1) return fail(at, "oneOf");
  if (typeof value === "string") return checkString(schema, value, at);
  if (Array.isArray(value)) return checkArray(schema, value, at, cache);
  if (isObject(value)) return checkObject(schema, value, at, cache);
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) return fail(at, "minimum");
    if (schema.maximum !== undefined && value > schema.maximum) return fail(at, "maximum");
  }
  return null;
}
