// Sets of code points as sorted, disjoint, inclusive ranges: what one
// character of a `pattern` may match, so the pattern rules can tell whether
// two places of a pattern can take the same character.

/** Sorted, disjoint, non-adjacent [lo, hi] ranges of code points. */
export type CharSet = readonly (readonly [number, number])[];

/** The highest code point. */
export const MAX_CODE_POINT = 0x10ffff;

/** Every code point (also the stand-in for a set we do not model, such as `\p{…}`). */
export const ANY: CharSet = [[0, MAX_CODE_POINT]];

/** Normalizes ranges: sorted, merged where they touch or overlap. */
export function union(...sets: CharSet[]): CharSet {
  const all = sets.flat().map(([lo, hi]) => [lo, hi] as [number, number]).sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of all) {
    const last = out[out.length - 1];
    if (last !== undefined && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

/** The code points not in `set`. */
export function complement(set: CharSet): CharSet {
  const out: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of union(set)) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

/** True when the two sets share a code point. */
export function overlaps(a: CharSet, b: CharSet): boolean {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as readonly [number, number];
    const y = b[j] as readonly [number, number];
    if (x[1] < y[0]) i++;
    else if (y[1] < x[0]) j++;
    else return true;
  }
  return false;
}

const single = (c: number): CharSet => [[c, c]];

/** `\d` */
export const DIGIT: CharSet = [[0x30, 0x39]];
/** `\w` (without the `i` flag: ASCII only) */
export const WORD: CharSet = union(DIGIT, [[0x41, 0x5a]], single(0x5f), [[0x61, 0x7a]]);
/** `\s`: white space and line terminators as ECMAScript defines them. */
export const SPACE: CharSet = union(
  [[0x09, 0x0d]], single(0x20), single(0xa0), single(0x1680), [[0x2000, 0x200a]],
  [[0x2028, 0x2029]], single(0x202f), single(0x205f), single(0x3000), single(0xfeff),
);
/** `.` without the `s` flag: everything but a line terminator. */
export const DOT: CharSet = complement(union(single(0x0a), single(0x0d), [[0x2028, 0x2029]]));

/** The set of one code point. */
export function charSet(c: number): CharSet {
  return single(c);
}
