// A small, bounded memo for pure text conversions. Every invocation re-reads
// the same recent room history, and Lisa's own earlier replies are HTML, so
// without it each answer re-parses the same dozens of formatted bodies with
// parse5 (bench/invocation.ts: about a tenth of Lisa's CPU per invocation).
// The result depends only on the input string, so a hit can never carry text
// from one room into another: whoever asks already holds the same input.

/** Most recently used first-out memo of `convert`, bounded by entries and by input+output characters. */
export class TextMemo {
  private readonly entries = new Map<string, string>();
  private characters = 0;
  private readonly convert: (input: string) => string;
  private readonly maxEntries: number;
  private readonly maxCharacters: number;

  constructor(convert: (input: string) => string, limits: { readonly maxEntries: number; readonly maxCharacters: number }) {
    this.convert = convert;
    this.maxEntries = limits.maxEntries;
    this.maxCharacters = limits.maxCharacters;
  }

  /** `convert(input)`, from the memo when the same input was converted recently. */
  get(input: string): string {
    const known = this.entries.get(input);
    if (known !== undefined) {
      // Re-insert so the Map's insertion order stays least recently used first.
      this.entries.delete(input);
      this.entries.set(input, known);
      return known;
    }
    const output = this.convert(input);
    const size = input.length + output.length;
    if (size > this.maxCharacters / 8) return output;
    this.entries.set(input, output);
    this.characters += size;
    for (const [oldest, value] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.characters <= this.maxCharacters) break;
      this.entries.delete(oldest);
      this.characters -= oldest.length + value.length;
    }
    return output;
  }

  /** Number of remembered conversions (for tests). */
  get size(): number {
    return this.entries.size;
  }
}
