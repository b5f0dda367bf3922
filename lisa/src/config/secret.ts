import { inspect } from "node:util";

const REDACTED = "[REDACTED]";

/** A resolved secret value that never prints itself: only `reveal()` returns it. */
export class Secret {
  readonly #value: string;
  /** The configuration key the secret came from (safe to print). */
  readonly key: string;

  constructor(key: string, value: string) {
    this.key = key;
    this.#value = value;
  }

  /** The secret value, for the one place that must send it. */
  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return `Secret(${this.key}: ${REDACTED})`;
  }
}
