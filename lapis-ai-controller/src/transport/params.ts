// Small validators for request params; failures are `invalid_params`.

/** Thrown inside handlers only through `Params`; converted to `invalid_params`. */
export class InvalidParams extends Error {
  /** The offending key path (never its value). */
  readonly path: string;
  constructor(path: string) {
    super("invalid_params");
    this.path = path;
  }
}

const ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/**
 * Reads and checks params by key; unknown keys are refused. An optional key
 * given as `null` reads as absent, so every value the service returns (the
 * binding's `applicationRef: null`, a config's `title: null`) is accepted
 * back where the protocol takes it.
 */
export class Params {
  readonly #raw: Record<string, unknown>;

  constructor(raw: Record<string, unknown>, allowed: readonly string[]) {
    for (const key of Object.keys(raw)) if (!allowed.includes(key)) throw new InvalidParams(key);
    const present: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(raw)) if (value !== null) present[key] = value;
    this.#raw = present;
  }

  /** A required identifier (commandId, threadId, endpointId …). */
  id(key: string): string {
    const value = this.#raw[key];
    if (typeof value !== "string" || !ID.test(value)) throw new InvalidParams(key);
    return value;
  }

  optionalId(key: string): string | undefined {
    return this.#raw[key] === undefined ? undefined : this.id(key);
  }

  /** A non-negative integer in [min, max]. */
  optionalInt(key: string, min: number, max: number): number | undefined {
    const value = this.#raw[key];
    if (value === undefined) return undefined;
    if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) throw new InvalidParams(key);
    return value;
  }

  optionalString(key: string, maxLength: number): string | undefined {
    const value = this.#raw[key];
    if (value === undefined) return undefined;
    if (typeof value !== "string" || value.length > maxLength) throw new InvalidParams(key);
    return value;
  }

  /** An application's own reference (a source identity, not content): 1..maxLength characters, no control characters. */
  optionalRef(key: string, maxLength: number): string | undefined {
    const value = this.#raw[key];
    if (value === undefined) return undefined;
    if (typeof value !== "string" || value.length === 0 || value.length > maxLength || /[\u0000-\u001f\u007f-\u009f]/.test(value)) throw new InvalidParams(key);
    return value;
  }

  optionalBoolean(key: string): boolean | undefined {
    const value = this.#raw[key];
    if (value === undefined) return undefined;
    if (typeof value !== "boolean") throw new InvalidParams(key);
    return value;
  }

  /** A list of distinct identifiers, at most `max`, returned sorted. */
  optionalIds(key: string, max: number): readonly string[] | undefined {
    const value = this.#raw[key];
    if (value === undefined) return undefined;
    if (!Array.isArray(value) || value.length > max) throw new InvalidParams(key);
    for (const item of value) if (typeof item !== "string" || !ID.test(item)) throw new InvalidParams(key);
    return [...new Set(value as string[])].sort();
  }

  optionalEnum<T extends string>(key: string, values: readonly T[]): T | undefined {
    const value = this.#raw[key];
    if (value === undefined) return undefined;
    if (typeof value !== "string" || !(values as readonly string[]).includes(value)) throw new InvalidParams(key);
    return value as T;
  }

  /** A nested object, validated by its own Params. */
  optionalObject(key: string, allowed: readonly string[]): Params | undefined {
    const value = this.#raw[key];
    if (value === undefined) return undefined;
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new InvalidParams(key);
    return new Params(value as Record<string, unknown>, allowed);
  }

  /** Any JSON value (turn input), passed on unchanged. */
  raw(key: string): unknown {
    return this.#raw[key];
  }
}
