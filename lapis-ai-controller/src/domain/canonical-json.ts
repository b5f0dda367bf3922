// Canonical JSON: object keys sorted, no whitespace. Used for command input
// identity and transcript hashes, so the same value always gives one text,
// and by the contract validator as the identity of a value in a set (enum,
// const, uniqueItems). The walk keeps its own stack, so a value nested
// deeper than the call stack allows still serializes (values up to 256 levels
// take a faster recursive path).

/** Serializes a JSON value canonically; non-JSON values (functions, cycles, non-finite numbers) throw. */
export function canonicalJson(value: unknown): string {
  const out = serialize(value);
  if (typeof out !== "string") throw new TypeError(`canonicalJson: ${out.bad}`);
  return out;
}

/** The canonical JSON of `value`, or undefined when it is not a JSON value (never throws). */
export function canonicalKey(value: unknown): string | undefined {
  const out = serialize(value);
  return typeof out === "string" ? out : undefined;
}

/** Nesting the recursive fast path handles; deeper values (or cycles) take the walk with its own stack. */
const FAST_DEPTH = 256;

class Fallback {
  readonly bad: string | null;
  constructor(bad: string | null) {
    this.bad = bad;
  }
}

// Writes into `out`; one join at the end gives a flat string, which hashes
// (in a Set) far faster than a rope of concatenations.
function fast(value: unknown, depth: number, out: string[]): void {
  if (value === null) { out.push("null"); return; }
  switch (typeof value) {
    case "string":
    case "boolean":
      out.push(JSON.stringify(value));
      return;
    case "number":
      if (!Number.isFinite(value)) throw new Fallback("non-finite number");
      out.push(JSON.stringify(value));
      return;
    case "object":
      break;
    default:
      throw new Fallback(`unsupported ${typeof value}`);
  }
  if (depth >= FAST_DEPTH) throw new Fallback(null);
  if (Array.isArray(value)) {
    out.push("[");
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.push(",");
      const item: unknown = value[i];
      fast(item === undefined ? null : item, depth + 1, out);
    }
    out.push("]");
    return;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  let first = true;
  out.push("{");
  for (const key of keys) {
    const item = record[key];
    if (item === undefined) continue;
    out.push(first ? `${JSON.stringify(key)}:` : `,${JSON.stringify(key)}:`);
    first = false;
    fast(item, depth + 1, out);
  }
  out.push("}");
}

/**
 * True when `value` is plain JSON whose object keys are already in canonical
 * order at every level (the usual case): then the native serializer writes
 * exactly the canonical text, flat and fast.
 */
function alreadyCanonical(value: unknown, depth: number): boolean {
  if (typeof value !== "object" || value === null) {
    return typeof value === "string" || typeof value === "boolean" || value === null || (typeof value === "number" && Number.isFinite(value));
  }
  if (depth >= FAST_DEPTH) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (item === undefined || !alreadyCanonical(item, depth + 1)) return false;
    return true;
  }
  let previous: string | null = null;
  const record = value as Record<string, unknown>;
  for (const key in record) {
    if (!Object.hasOwn(record, key) || (previous !== null && !(previous < key))) return false;
    previous = key;
    const item = record[key];
    if (item === undefined || (typeof item === "object" && item !== null && typeof (item as { toJSON?: unknown }).toJSON === "function")) return false;
    if (!alreadyCanonical(item, depth + 1)) return false;
  }
  return typeof (record as { toJSON?: unknown }).toJSON !== "function";
}

function serialize(root: unknown): string | { readonly bad: string } {
  if (alreadyCanonical(root, 0)) return JSON.stringify(root);
  try {
    const out: string[] = [];
    fast(root, 0, out);
    return out.join("");
  } catch (error) {
    if (!(error instanceof Fallback)) throw error;
    return error.bad === null ? walk(root) : { bad: error.bad };
  }
}

// A task is a value still to write, a literal to emit, or the end of an open object or array.
type Task = { readonly v: unknown } | { readonly lit: string } | { readonly close: object };

function walk(root: unknown): string | { readonly bad: string } {
  const parts: string[] = [];
  const open = new Set<object>();
  const stack: Task[] = [{ v: root }];
  for (let task = stack.pop(); task !== undefined; task = stack.pop()) {
    if ("lit" in task) { parts.push(task.lit); continue; }
    if ("close" in task) { open.delete(task.close); continue; }
    const value = task.v;
    if (value === null) { parts.push("null"); continue; }
    switch (typeof value) {
      case "string":
      case "boolean":
        parts.push(JSON.stringify(value));
        continue;
      case "number":
        if (!Number.isFinite(value)) return { bad: "non-finite number" };
        parts.push(JSON.stringify(value));
        continue;
      case "object":
        break;
      default:
        return { bad: `unsupported ${typeof value}` };
    }
    const object = value as object;
    if (open.has(object)) return { bad: "cycle" };
    open.add(object);
    stack.push({ close: object });
    if (Array.isArray(object)) {
      stack.push({ lit: "]" });
      for (let i = object.length - 1; i >= 0; i--) {
        const item: unknown = object[i];
        stack.push({ v: item === undefined ? null : item });
        if (i > 0) stack.push({ lit: "," });
      }
      parts.push("[");
    } else {
      const record = object as Record<string, unknown>;
      const keys = Object.keys(record).filter((k) => record[k] !== undefined).sort();
      stack.push({ lit: "}" });
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i] as string;
        stack.push({ v: record[key] });
        stack.push({ lit: `${i > 0 ? "," : ""}${JSON.stringify(key)}:` });
      }
      parts.push("{");
    }
  }
  return parts.join("");
}
