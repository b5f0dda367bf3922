// JSON equality for `enum`, `const` and `uniqueItems` without comparing
// every pair. Strings, numbers, booleans and null are their own keys (a
// JavaScript Set compares them by value, and -0 equals 0 as JSON equality
// wants); objects and arrays are keyed by their canonical JSON. `enum` and
// `const` are set lookups; `uniqueItems` over only numbers, only strings or
// only objects and arrays sorts the keys and compares neighbours, and a
// mixed array goes through a set.
import { canonicalKey } from "../canonical-json.ts";

type Primitive = string | number | boolean | null;

/** Canonical keys of the object and array values met during one validation (dropped after it). */
export interface KeyCache {
  has(value: object): boolean;
  get(value: object): string | undefined;
  set(value: object, key: string | undefined): unknown;
}

function keyOf(value: object, cache: KeyCache): string | undefined {
  if (cache.has(value)) return cache.get(value);
  const key = canonicalKey(value);
  cache.set(value, key);
  return key;
}

/** A set of JSON values with membership by JSON equality. */
export class JsonSet {
  readonly #primitives = new Set<Primitive>();
  readonly #composites = new Set<string>();

  /** Adds `value`; false when an equal value was already in the set (a non-JSON value is never added). */
  add(value: unknown, cache: KeyCache): boolean {
    if (typeof value === "object" && value !== null) {
      const key = keyOf(value, cache);
      if (key === undefined || this.#composites.has(key)) return false;
      this.#composites.add(key);
      return true;
    }
    if (!isPrimitive(value) || this.#primitives.has(value)) return false;
    this.#primitives.add(value);
    return true;
  }

  /** True when a value JSON-equal to `value` is in the set. */
  has(value: unknown, cache: KeyCache): boolean {
    if (typeof value === "object" && value !== null) {
      const key = keyOf(value, cache);
      return key !== undefined && this.#composites.has(key);
    }
    return isPrimitive(value) && this.#primitives.has(value);
  }
}

function isPrimitive(value: unknown): value is Primitive {
  return value === null || typeof value === "string" || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value));
}

const members = new WeakMap<readonly unknown[], JsonSet>();
const schemaKeys = new WeakMap<object, string | undefined>();

/** The set of a schema's `enum` array, built on its first use. */
export function enumSet(values: readonly unknown[]): JsonSet {
  let set = members.get(values);
  if (set === undefined) {
    set = new JsonSet();
    for (const v of values) set.add(v, schemaKeys);
    members.set(values, set);
  }
  return set;
}

/** True when `value` is JSON-equal to a schema's `const`. */
export function equalsConst(constant: unknown, value: unknown, cache: KeyCache): boolean {
  if (typeof constant !== "object" || constant === null) return isPrimitive(constant) && constant === value;
  if (typeof value !== "object" || value === null || Array.isArray(value) !== Array.isArray(constant)) return false;
  const key = keyOf(constant, schemaKeys);
  return key !== undefined && key === keyOf(value, cache);
}

/** True when every item of `items` is distinct under JSON equality. */
export function allDistinct(items: readonly unknown[], cache: KeyCache): boolean {
  // All finite numbers (the common large case): sorted, a duplicate sits next to its twin (-0 beside 0).
  if (items.every((x) => typeof x === "number" && Number.isFinite(x))) {
    const sorted = Float64Array.from(items as readonly number[]).sort();
    for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) return false;
    return true;
  }
  // All strings, or all objects and arrays (by canonical JSON): sorted copies, a duplicate sits next to its twin;
  // cheaper than hashing every key into a set.
  if (items.every((x) => typeof x === "string")) return sortedDistinct([...(items as readonly string[])]);
  if (items.every((x) => typeof x === "object" && x !== null)) {
    const keys: string[] = [];
    for (const item of items) {
      const key = canonicalKey(item);
      if (key === undefined) break;
      keys.push(key);
    }
    if (keys.length === items.length) return sortedDistinct(keys);
  }
  const seen = new JsonSet();
  for (const item of items) {
    if (!seen.add(item, cache)) {
      // A non-JSON item is not added either; only a real duplicate fails.
      if (seen.has(item, cache)) return false;
    }
  }
  return true;
}

function sortedDistinct(keys: string[]): boolean {
  keys.sort();
  for (let i = 1; i < keys.length; i++) if (keys[i] === keys[i - 1]) return false;
  return true;
}
