// The check that an application-supplied schema (a tool's input) stays inside
// the subset of schema.ts, matches the 2020-12 metaschema for the keywords
// it uses, and stays within bounds that keep validating a call's arguments
// linear (validate.ts). Every refusal names the key path and the rule.
import { ANALYSIS_BUDGET, type AnalysisBudget, patternRule } from "./pattern-rules.ts";
import { regex } from "./validate.ts";

/** Bounds on an application-supplied schema. */
export interface SchemaBounds {
  /** Deepest nesting of subschemas. */
  readonly maxDepth: number;
  /** Most subschemas in total. */
  readonly maxNodes: number;
  /** Longest `pattern`. */
  readonly maxPatternLength: number;
  /** Deepest JSON nesting of the whole schema document, `default`, `examples`, `enum` and `const` values included. */
  readonly maxJsonDepth?: number;
  /** Most subschemas that may apply to one place of a value through `anyOf` / `oneOf` (each costs one more look at it). */
  readonly maxApplicators?: number;
  /** Most characters of all `pattern`s together (each is analysed at registration). */
  readonly maxPatternChars?: number;
}

/** Where a schema was refused and by which rule. */
export interface SchemaFailure {
  readonly path: string;
  readonly rule: string;
}

/** The only `$schema` accepted: the dialect the validator implements. */
export const SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema";
/** Defaults of the optional bounds. */
export const SCHEMA_BOUND_DEFAULTS = { maxJsonDepth: 64, maxApplicators: 8, maxPatternChars: 4096 } as const;

const TYPES: ReadonlySet<string> = new Set(["object", "array", "string", "integer", "number", "boolean", "null"]);
const KEYWORDS: ReadonlySet<string> = new Set([
  "type", "description", "title", "properties", "required", "additionalProperties", "maxProperties", "items", "minItems",
  "maxItems", "uniqueItems", "enum", "const", "minLength", "maxLength", "pattern", "minimum", "maximum", "anyOf", "oneOf",
  "default", "examples", "format", "$schema",
]);
const COUNTS = ["maxProperties", "minItems", "maxItems", "minLength", "maxLength"];

type Json = { readonly [key: string]: unknown };

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const join = (path: string, key: string): string => (path === "" ? key.slice(0, 64) : `${path}.${key.slice(0, 64)}`);
const refuse = (path: string, rule: string): SchemaFailure => ({ path, rule });
const distinct = (items: readonly unknown[]): boolean => new Set(items).size === items.length;

/**
 * Walks a whole JSON value with its own stack: depth at most `maxDepth`, and
 * every number finite (a literal such as 1e400 parses to Infinity). The
 * path is built only for a failure, from parent links. Used on schema
 * documents and on tool call arguments.
 */
export function checkJsonValue(root: unknown, maxDepth: number): SchemaFailure | null {
  // Only containers go on the stack; a leaf is judged where its container is read.
  type Entry = { readonly v: object; readonly depth: number; readonly up: Entry | null; readonly key: string | number };
  const pathOf = (e: Entry): string => {
    const keys: (string | number)[] = [];
    for (let at: Entry | null = e; at !== null && at.up !== null; at = at.up) keys.push(at.key);
    return keys.reverse().reduce<string>((path, key) => (typeof key === "number" ? `${path}[${key}]` : join(path, key)), "");
  };
  const finite = (x: unknown): boolean => typeof x !== "number" || Number.isFinite(x);
  if (!finite(root)) return refuse("", "number_not_finite");
  if (typeof root !== "object" || root === null) return null;
  const stack: Entry[] = [{ v: root, depth: 0, up: null, key: "" }];
  for (let e = stack.pop(); e !== undefined; e = stack.pop()) {
    if (e.depth >= maxDepth) return refuse(pathOf(e), "json_too_deep");
    const visit = (x: unknown, key: string | number): SchemaFailure | null => {
      if (typeof x === "object" && x !== null) stack.push({ v: x, depth: (e as Entry).depth + 1, up: e as Entry, key });
      else if (!finite(x)) return refuse(pathOf({ v: {}, depth: 0, up: e as Entry, key }), "number_not_finite");
      return null;
    };
    if (Array.isArray(e.v)) {
      for (let i = 0; i < e.v.length; i++) {
        const failed = visit(e.v[i], i);
        if (failed !== null) return failed;
      }
    } else {
      const record = e.v as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        const failed = visit(record[key], key);
        if (failed !== null) return failed;
      }
    }
  }
  return null;
}

/** Schema keywords of one node, in metaschema order; null when all hold. */
function checkKeywords(s: Json, path: string, walk: Walk, root: boolean): SchemaFailure | null {
  const bounds = walk.bounds;
  for (const key of Object.keys(s)) if (!KEYWORDS.has(key)) return refuse(join(path, key), "keyword_unknown");
  if (s.type !== undefined) {
    const types = typeof s.type === "string" ? [s.type] : s.type;
    if (!Array.isArray(types) || types.length === 0 || !types.every((t) => TYPES.has(t))) return refuse(join(path, "type"), "type_invalid");
    if (!distinct(types)) return refuse(join(path, "type"), "type_duplicate");
  }
  for (const key of ["description", "title", "format"]) if (s[key] !== undefined && typeof s[key] !== "string") return refuse(join(path, key), "keyword_invalid");
  for (const key of COUNTS) if (s[key] !== undefined && !(Number.isSafeInteger(s[key]) && (s[key] as number) >= 0)) return refuse(join(path, key), "count_invalid");
  for (const key of ["minimum", "maximum"]) if (s[key] !== undefined && typeof s[key] !== "number") return refuse(join(path, key), "keyword_invalid");
  if (s.uniqueItems !== undefined && typeof s.uniqueItems !== "boolean") return refuse(join(path, "uniqueItems"), "keyword_invalid");
  if (s.enum !== undefined && (!Array.isArray(s.enum) || s.enum.length === 0)) return refuse(join(path, "enum"), "enum_invalid");
  if (s.examples !== undefined && !Array.isArray(s.examples)) return refuse(join(path, "examples"), "examples_invalid");
  if (s.$schema !== undefined && (!root || (s.$schema !== SCHEMA_DIALECT && s.$schema !== `${SCHEMA_DIALECT}#`))) return refuse(join(path, "$schema"), "schema_dialect");
  if (s.required !== undefined) {
    if (!Array.isArray(s.required) || !s.required.every((r) => typeof r === "string")) return refuse(join(path, "required"), "keyword_invalid");
    if (!distinct(s.required)) return refuse(join(path, "required"), "required_duplicate");
  }
  if (s.pattern !== undefined) {
    const at = join(path, "pattern");
    if (typeof s.pattern !== "string") return refuse(at, "keyword_invalid");
    if (s.pattern.length > bounds.maxPatternLength) return refuse(at, "pattern_too_long");
    walk.patternChars += s.pattern.length;
    if (walk.patternChars > (bounds.maxPatternChars ?? SCHEMA_BOUND_DEFAULTS.maxPatternChars)) return refuse(at, "patterns_too_long");
    if (regex(s.pattern) === null) return refuse(at, "pattern_syntax");
    const rule = patternRule(s.pattern, typeof s.maxLength === "number" ? s.maxLength : undefined, walk.analysis);
    if (rule !== null) return refuse(at, rule);
  }
  return null;
}

interface Walk {
  readonly bounds: SchemaBounds;
  nodes: number;
  patternChars: number;
  /** Shared by all patterns of the schema. */
  readonly analysis: AnalysisBudget;
}

/**
 * Checks one subschema and those below it (at most `maxDepth` levels, so the
 * recursion is bounded). Returns, per value depth below this node, the most
 * subschemas that can apply to one place there.
 */
function checkNode(value: unknown, path: string, depth: number, walk: Walk): SchemaFailure | number[] {
  if (!isObject(value)) return refuse(path, "schema_not_object");
  if (depth > walk.bounds.maxDepth) return refuse(path, "schema_too_deep");
  if (++walk.nodes > walk.bounds.maxNodes) return refuse(path, "schema_too_many_nodes");
  const s = value;
  const failed = checkKeywords(s, path, walk, depth === 0);
  if (failed !== null) return failed;
  const children: [string, unknown][] = [];
  if (s.properties !== undefined) {
    if (!isObject(s.properties)) return refuse(join(path, "properties"), "keyword_invalid");
    for (const [k, sub] of Object.entries(s.properties)) children.push([join(join(path, "properties"), k), sub]);
  }
  if (s.items !== undefined) children.push([join(path, "items"), s.items]);
  if (s.additionalProperties !== undefined && typeof s.additionalProperties !== "boolean") children.push([join(path, "additionalProperties"), s.additionalProperties]);
  // Per value depth: this node, plus its in-place branches, plus the costliest child one level down.
  const cost: number[] = [1];
  const add = (from: readonly number[], shift: number) => from.forEach((n, d) => { cost[d + shift] = (cost[d + shift] ?? 0) + n; });
  const below: number[] = [];
  for (const [at, sub] of children) {
    const c = checkNode(sub, at, depth + 1, walk);
    if (!Array.isArray(c)) return c;
    c.forEach((n, d) => { below[d] = Math.max(below[d] ?? 0, n); });
  }
  add(below, 1);
  for (const key of ["anyOf", "oneOf"]) {
    if (s[key] === undefined) continue;
    if (!Array.isArray(s[key]) || (s[key] as unknown[]).length === 0) return refuse(join(path, key), "keyword_invalid");
    for (const [i, sub] of (s[key] as unknown[]).entries()) {
      const c = checkNode(sub, join(path, `${key}[${i}]`), depth + 1, walk);
      if (!Array.isArray(c)) return c;
      add(c, 0);
    }
  }
  return cost;
}

/** Checks that `value` is a schema of the subset within `bounds`; returns null or where and why it was refused. */
export function checkSchema(value: unknown, bounds: SchemaBounds): SchemaFailure | null {
  const json = checkJsonValue(value, bounds.maxJsonDepth ?? SCHEMA_BOUND_DEFAULTS.maxJsonDepth);
  if (json !== null) return json;
  const walk: Walk = { bounds, nodes: 0, patternChars: 0, analysis: { entries: ANALYSIS_BUDGET } };
  const cost = checkNode(value, "", 0, walk);
  if (!Array.isArray(cost)) return cost;
  const max = bounds.maxApplicators ?? SCHEMA_BOUND_DEFAULTS.maxApplicators;
  return cost.some((n) => n > max) ? refuse("", "schema_too_wide") : null;
}
