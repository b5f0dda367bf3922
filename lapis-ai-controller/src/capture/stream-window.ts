// What each pinned detector could still match across the next stream chunk:
// derived from the detector's own regex source (never a hand-kept copy), so
// a changed table changes the hold-back with it. For each detector: the
// longest match it can make (its window), the characters a match can hold
// (or "any"), and the literal prefixes every match starts with. Only the
// regex subset the table uses is understood; anything else throws, so a new
// construct cannot silently weaken the streaming hold.
import type { SecretDetector } from "./secret-detectors.ts";

/** The hold-back facts of one detector. */
export type DetectorWindow = {
  readonly id: string;
  /** Longest possible match, in UTF-16 units (Infinity for an unbounded pattern). */
  readonly max: number;
  /** Characters a match can contain, or "any". */
  readonly alphabet: ReadonlySet<string> | "any";
  /** Every match starts with one of these literals ("" when nothing is known). */
  readonly leads: readonly string[];
};

type Alpha = Set<string> | "any";
/** One analysed node: `exact` lists every string it matches when that set is small and literal. */
type Node = { max: number; alpha: Alpha; exact: string[] | null; leads: string[] };

const MAX_LEADS = 64;
const EMPTY: Node = { max: 0, alpha: new Set(), exact: [""], leads: [""] };

function union(a: Alpha, b: Alpha): Alpha {
  if (a === "any" || b === "any") return "any";
  return new Set([...a, ...b]);
}

function cross(a: readonly string[], b: readonly string[]): string[] | null {
  if (a.length * b.length > MAX_LEADS) return null;
  return a.flatMap((x) => b.map((y) => x + y));
}

function literal(c: string): Node {
  return { max: 1, alpha: new Set([c]), exact: [c], leads: [c] };
}

const anyChar: Node = { max: 1, alpha: "any", exact: null, leads: [""] };

class Parser {
  #i = 0;
  readonly #src: string;
  constructor(src: string) { this.#src = src; }

  parse(): Node {
    const node = this.#alternation();
    if (this.#i !== this.#src.length) this.#fail("unexpected ')'");
    return node;
  }

  #fail(why: string): never {
    throw new Error(`stream-window: unsupported detector regex (${why}) at ${this.#i}`);
  }

  #alternation(): Node {
    const alts = [this.#sequence()];
    while (this.#src[this.#i] === "|") { this.#i++; alts.push(this.#sequence()); }
    if (alts.length === 1) return alts[0] as Node;
    const exact = alts.every((a) => a.exact !== null) ? alts.flatMap((a) => a.exact as string[]) : null;
    return {
      max: Math.max(...alts.map((a) => a.max)),
      alpha: alts.reduce<Alpha>((acc, a) => union(acc, a.alpha), new Set()),
      exact: exact !== null && exact.length <= MAX_LEADS ? exact : null,
      leads: alts.flatMap((a) => a.exact ?? a.leads),
    };
  }

  #sequence(): Node {
    let max = 0;
    let alpha: Alpha = new Set();
    let exact: string[] | null = [""];
    let leads: string[] = [""];
    let open = true; // still collecting literal prefixes
    while (this.#i < this.#src.length && this.#src[this.#i] !== "|" && this.#src[this.#i] !== ")") {
      const term = this.#quantified();
      max += term.max;
      alpha = union(alpha, term.alpha);
      exact = exact !== null && term.exact !== null ? cross(exact, term.exact) : null;
      if (!open) continue;
      const next = cross(leads, term.exact ?? term.leads);
      if (next === null) { open = false; continue; }
      leads = next;
      if (term.exact === null) open = false;
    }
    return { max, alpha, exact, leads };
  }

  #quantified(): Node {
    const atom = this.#atom();
    const c = this.#src[this.#i];
    let lo: number;
    let hi: number;
    if (c === "?") { lo = 0; hi = 1; this.#i++; }
    else if (c === "*") { lo = 0; hi = Infinity; this.#i++; }
    else if (c === "+") { lo = 1; hi = Infinity; this.#i++; }
    else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.#src.slice(this.#i));
      if (m === null) this.#fail("bad {}");
      lo = Number(m[1]);
      hi = m[2] === undefined ? lo : m[3] === "" ? Infinity : Number(m[3]);
      this.#i += m[0].length;
    } else return atom;
    if (this.#src[this.#i] === "?") this.#i++; // lazy: same language
    let exact: string[] | null = null;
    if (lo === hi && atom.exact !== null) {
      exact = [""];
      for (let n = 0; n < lo && exact !== null; n++) exact = cross(exact, atom.exact);
    }
    return { max: hi === 0 ? 0 : atom.max * hi, alpha: atom.alpha, exact, leads: lo === 0 ? [""] : atom.exact ?? atom.leads };
  }

  #atom(): Node {
    const src = this.#src;
    const c = src[this.#i] as string;
    if (c === "(") {
      this.#i++;
      let zeroWidth = false;
      if (src.startsWith("?:", this.#i)) this.#i += 2;
      // A negative lookbehind without its context only widens what matches (safe); a positive one would narrow it.
      else if (src.startsWith("?<!", this.#i)) { this.#i += 3; zeroWidth = true; }
      else if (src.startsWith("?!", this.#i) || src.startsWith("?=", this.#i)) { this.#i += 2; zeroWidth = true; }
      else if (src[this.#i] === "?") this.#fail("group kind");
      const inner = this.#alternation();
      if (src[this.#i] !== ")") this.#fail("unclosed group");
      this.#i++;
      return zeroWidth ? EMPTY : inner;
    }
    if (c === "[") return this.#klass();
    if (c === ".") { this.#i++; return anyChar; }
    if (c === "\\") {
      const e = src[this.#i + 1] as string;
      this.#i += 2;
      if (/[sSdDwWbB]/.test(e)) { if (/[bB]/.test(e)) this.#fail("word boundary"); return anyChar; }
      if (/[A-Za-z0-9]/.test(e)) this.#fail(`escape \\${e}`);
      return literal(e);
    }
    if (c === "^" || c === "$") this.#fail("anchor");
    this.#i++;
    return literal(c);
  }

  #klass(): Node {
    const src = this.#src;
    this.#i++;
    if (src[this.#i] === "^") this.#fail("negated class");
    const chars = new Set<string>();
    let any = false;
    while (src[this.#i] !== "]") {
      if (this.#i >= src.length) this.#fail("unclosed class");
      let c = src[this.#i] as string;
      if (c === "\\") {
        const e = src[this.#i + 1] as string;
        this.#i += 2;
        if (/[sSdDwW]/.test(e)) { any = true; continue; }
        if (/[A-Za-z0-9]/.test(e)) this.#fail(`escape \\${e}`);
        c = e;
      } else this.#i++;
      if (src[this.#i] === "-" && src[this.#i + 1] !== "]" && src[this.#i + 1] !== undefined) {
        const to = src[this.#i + 1] as string;
        if (to === "\\") this.#fail("escaped range end");
        this.#i += 2;
        for (let p = c.charCodeAt(0); p <= to.charCodeAt(0); p++) chars.add(String.fromCharCode(p));
      } else chars.add(c);
    }
    this.#i++;
    const single = !any && chars.size === 1 ? [...chars] : null;
    return { max: 1, alpha: any ? "any" : chars, exact: single, leads: single ?? [""] };
  }
}

/** Derives the hold-back facts of every detector of a table. */
export function detectorWindows(table: readonly SecretDetector[]): DetectorWindow[] {
  return table.map((d) => {
    const n = new Parser(d.pattern).parse();
    const leads = [...new Set(n.exact ?? n.leads)];
    return { id: d.id, max: n.max, alphabet: n.alpha, leads: leads.includes("") ? [""] : leads };
  });
}
