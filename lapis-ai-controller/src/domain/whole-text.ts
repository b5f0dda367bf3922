// A text read whole from SQLite on every runtime: the pieces the durable
// store (persistence/nul-text.ts) and the group memory profile
// (memory/group/whole-text.ts) share. Deno 2.9's node:sqlite hands JS a read
// TEXT cut at its first NUL, so where a runtime cuts, a free-text column is
// selected as its BLOB (its UTF-8 bytes) when it holds a NUL, and decoded.
// Pure: no SQLite here, only the select item and the decoding.

/** A statement whose one value, `v`, a runtime that cuts reads back as anything but "a<NUL>b" (cutsAtNul). */
export const NUL_PROBE_SQL = "SELECT 'a' || char(0) || 'b' AS v";

/** Whether the value NUL_PROBE_SQL read back says the connection cuts a read text at its NUL. */
export function cutsAtNul(probed: unknown): boolean {
  return probed !== "a\u0000b";
}

/** The select list of a row's columns, each by name, the ones in `whole` through wholeTextItem. */
export function wholeSelectList(columns: readonly string[], whole: readonly string[]): string {
  return columns.map((name) => (whole.includes(name) ? wholeTextItem(`"${name}"`, name) : `"${name}"`)).join(", ");
}

/**
 * `column` as a select item: a value holding a NUL as its BLOB, else itself
 * (named `as`); with `only`, searched for a NUL only in the rows meeting
 * that SQL condition (the others hold none).
 */
export function wholeTextItem(column: string, as = column, only?: string): string {
  return `iif(${only === undefined ? "" : `${only} AND `}instr(${column}, char(0)) > 0, CAST(${column} AS BLOB), ${column}) AS "${as}"`;
}

const UTF8 = new TextDecoder("utf-8", { ignoreBOM: true });

/** A text column's value as a string: a BLOB read by wholeTextItem decoded from UTF-8. */
export function textOf(value: unknown): string {
  return typeof value === "string" ? value : value instanceof Uint8Array ? UTF8.decode(value) : String(value);
}
