// Canonical JSON: object keys sorted, no whitespace. Used for command input
// identity and transcript hashes, so the same value always gives one text.

/** Serializes a JSON value canonically; non-JSON values (functions, cycles) throw. */
export function canonicalJson(value: unknown): string {
  return write(value, new Set());
}

function write(value: unknown, seen: Set<object>): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
    case "boolean":
      return JSON.stringify(value);
    case "number":
      if (!Number.isFinite(value)) throw new TypeError("canonicalJson: non-finite number");
      return JSON.stringify(value);
    case "object":
      break;
    default:
      throw new TypeError(`canonicalJson: unsupported ${typeof value}`);
  }
  const object = value as object;
  if (seen.has(object)) throw new TypeError("canonicalJson: cycle");
  seen.add(object);
  let out: string;
  if (Array.isArray(object)) {
    out = `[${object.map((item) => write(item === undefined ? null : item, seen)).join(",")}]`;
  } else {
    const record = object as Record<string, unknown>;
    const keys = Object.keys(record).filter((k) => record[k] !== undefined).sort();
    out = `{${keys.map((k) => `${JSON.stringify(k)}:${write(record[k], seen)}`).join(",")}}`;
  }
  seen.delete(object);
  return out;
}
