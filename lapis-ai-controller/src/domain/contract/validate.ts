// A validator for the JSON Schema subset of schema.ts, and a checker that an
// application-supplied schema (a tool's input) stays inside that subset and
// within bounds. Our own rather than a library: the subset is small, the same
// code runs in the service, the bridge and the browser-safe SDK, it compiles
// no code from schemas (no `new Function`), and its cost is bounded by the
// caps below; enum, const and uniqueItems are set lookups (json-sets.ts),
// linear in the value. A failure names a key path, never a value.
import { allDistinct, enumSet, equalsConst, type KeyCache } from "./json-sets.ts";
import type { Schema, SchemaType } from "./schema.ts";

const TYPES: ReadonlySet<string> = new Set(["object", "array", "string", "integer", "number", "boolean", "null"]);
const patterns = new Map<string, RegExp | null>();

function regex(pattern: string): RegExp | null {
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
    case "integer": return typeof value === "number" && Number.isSafeInteger(value);
    case "number": return typeof value === "number" && Number.isFinite(value);
    case "boolean": return typeof value === "boolean";
    case "null": return value === null;
  }
}

const join = (path: string, key: string): string => (path === "" ? key.slice(0, 64) : `${path}.${key.slice(0, 64)}`);

function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function checkString(schema: Schema, value: string, path: string): string | null {
  if (schema.maxLength !== undefined && value.length > schema.maxLength && codePoints(value) > schema.maxLength) return path;
  if (schema.minLength !== undefined && codePoints(value) < schema.minLength) return path;
  if (schema.pattern !== undefined && regex(schema.pattern)?.test(value) !== true) return path;
  return null;
}

function checkArray(schema: Schema, value: readonly unknown[], path: string, cache: KeyCache): string | null {
  if (schema.maxItems !== undefined && value.length > schema.maxItems) return path;
  if (schema.minItems !== undefined && value.length < schema.minItems) return path;
  if (schema.items !== undefined) {
    for (let i = 0; i < value.length; i++) {
      const failed = check(schema.items, value[i], `${path}[${i}]`, cache);
      if (failed !== null) return failed;
    }
  }
  if (schema.uniqueItems === true && !allDistinct(value, cache)) return path;
  return null;
}

function checkObject(schema: Schema, value: { readonly [key: string]: unknown }, path: string, cache: KeyCache): string | null {
  const keys = Object.keys(value);
  if (schema.maxProperties !== undefined && keys.length > schema.maxProperties) return path;
  for (const key of schema.required ?? []) if (!Object.hasOwn(value, key) || value[key] === undefined) return join(path, key);
  for (const key of keys) {
    const declared = schema.properties !== undefined && Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined;
    const sub = declared ?? schema.additionalProperties;
    if (sub === false) return join(path, key);
    if (sub === undefined || sub === true || value[key] === undefined) continue;
    const failed = check(sub, value[key], join(path, key), cache);
    if (failed !== null) return failed;
  }
  return null;
}

/** Validates `value` against `schema`; returns null, or the key path of the first failure ("" for the root). */
export function validate(schema: Schema, value: unknown, path = ""): string | null {
  return check(schema, value, path, new WeakMap());
}

function check(schema: Schema, value: unknown, path: string, cache: KeyCache): string | null {
  if (schema.const !== undefined && !equalsConst(schema.const, value, cache)) return path;
  if (schema.enum !== undefined && !enumSet(schema.enum).has(value, cache)) return path;
  if (schema.type !== undefined) {
    const types = typeof schema.type === "string" ? [schema.type] : schema.type;
    if (!types.some((t) => typeMatches(t, value))) return path;
  }
  if (schema.anyOf !== undefined && !schema.anyOf.some((s) => check(s, value, path, cache) === null)) return path;
  if (schema.oneOf !== undefined && schema.oneOf.filter((s) => check(s, value, path, cache) === null).length !== 1) return path;
  if (typeof value === "string") return checkString(schema, value, path);
  if (Array.isArray(value)) return checkArray(schema, value, path, cache);
  if (isObject(value)) return checkObject(schema, value, path, cache);
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) return path;
    if (schema.maximum !== undefined && value > schema.maximum) return path;
  }
  return null;
}

/** Bounds on an application-supplied schema. */
export interface SchemaBounds {
  /** Deepest nesting of subschemas. */
  readonly maxDepth: number;
  /** Most subschemas in total. */
  readonly maxNodes: number;
  /** Longest `pattern`. */
  readonly maxPatternLength: number;
}

const KEYWORDS: ReadonlySet<string> = new Set([
  "type", "description", "title", "properties", "required", "additionalProperties", "maxProperties", "items", "minItems",
  "maxItems", "uniqueItems", "enum", "const", "minLength", "maxLength", "pattern", "minimum", "maximum", "anyOf", "oneOf",
  "default", "examples", "format", "$schema",
]);
const COUNTS = ["maxProperties", "minItems", "maxItems", "minLength", "maxLength"];

function checkNode(value: unknown, path: string, depth: number, bounds: SchemaBounds, nodes: { n: number }): string | null {
  if (!isObject(value) || depth > bounds.maxDepth || ++nodes.n > bounds.maxNodes) return path;
  for (const key of Object.keys(value)) if (!KEYWORDS.has(key)) return join(path, key);
  const s = value as { readonly [key: string]: unknown };
  const types = typeof s.type === "string" ? [s.type] : s.type;
  if (types !== undefined && (!Array.isArray(types) || types.length === 0 || !types.every((t) => TYPES.has(t)))) return join(path, "type");
  for (const key of ["description", "title", "format"]) if (s[key] !== undefined && typeof s[key] !== "string") return join(path, key);
  for (const key of COUNTS) if (s[key] !== undefined && !(Number.isSafeInteger(s[key]) && (s[key] as number) >= 0)) return join(path, key);
  for (const key of ["minimum", "maximum"]) if (s[key] !== undefined && !(typeof s[key] === "number" && Number.isFinite(s[key]))) return join(path, key);
  if (s.uniqueItems !== undefined && typeof s.uniqueItems !== "boolean") return join(path, "uniqueItems");
  if (s.enum !== undefined && (!Array.isArray(s.enum) || s.enum.length === 0)) return join(path, "enum");
  if (s.pattern !== undefined && (typeof s.pattern !== "string" || s.pattern.length > bounds.maxPatternLength || regex(s.pattern) === null)) return join(path, "pattern");
  if (s.required !== undefined && (!Array.isArray(s.required) || !s.required.every((r) => typeof r === "string"))) return join(path, "required");
  if (s.properties !== undefined) {
    if (!isObject(s.properties)) return join(path, "properties");
    for (const [k, sub] of Object.entries(s.properties)) {
      const failed = checkNode(sub, join(join(path, "properties"), k), depth + 1, bounds, nodes);
      if (failed !== null) return failed;
    }
  }
  const subs: [string, unknown][] = [];
  if (s.items !== undefined) subs.push(["items", s.items]);
  if (s.additionalProperties !== undefined && typeof s.additionalProperties !== "boolean") subs.push(["additionalProperties", s.additionalProperties]);
  for (const key of ["anyOf", "oneOf"]) {
    if (s[key] === undefined) continue;
    if (!Array.isArray(s[key]) || (s[key] as unknown[]).length === 0) return join(path, key);
    (s[key] as unknown[]).forEach((sub, i) => subs.push([`${key}[${i}]`, sub]));
  }
  for (const [key, sub] of subs) {
    const failed = checkNode(sub, join(path, key), depth + 1, bounds, nodes);
    if (failed !== null) return failed;
  }
  return null;
}

/** Checks that `value` is a schema of the subset within `bounds`; returns null or the failing key path. */
export function checkSchema(value: unknown, bounds: SchemaBounds): string | null {
  return checkNode(value, "", 0, bounds, { n: 0 });
}
