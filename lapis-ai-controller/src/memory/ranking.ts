// The ranking policy both memory profiles share: one tokenizer, BM25 lexical
// scoring, and reciprocal rank fusion. Every order is total and
// deterministic: score first, then the more recent `updatedAt`, then the
// smaller id (code-unit order), so the same inputs always rank the same.
// Callers filter by partition or scope BEFORE handing documents here.

/** A document's term counts and token count, as `termStats` computes them from its text. */
export type TermStats = { readonly counts: ReadonlyMap<string, number>; readonly length: number };

/** A rankable document; `stats`, when given, must be `termStats(text)` (callers cache it across queries). */
export type RankDocument = { readonly id: string; readonly text: string; readonly updatedAt: string; readonly stats?: TermStats };

/** A ranked entry: the item and its score (higher is better). */
export type Ranked<T> = { readonly item: T; readonly score: number };

/** BM25 parameters. */
export type LexicalOptions = { readonly k1?: number; readonly b?: number; readonly limit?: number };

/** The default reciprocal-rank-fusion constant. */
export const RRF_K = 60;

const TOKEN = /[\p{L}\p{N}]+/gu;

/** Lower-cased NFKC word tokens (letters and digits), in text order. */
export function tokenize(text: string): string[] {
  return text.normalize("NFKC").toLowerCase().match(TOKEN) ?? [];
}

/** The term counts and token count of a text, for BM25. */
export function termStats(text: string): TermStats {
  const counts = new Map<string, number>();
  const tokens = tokenize(text);
  for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
  return { counts, length: tokens.length };
}

function timeOf(updatedAt: string): number {
  const t = Date.parse(updatedAt);
  return Number.isNaN(t) ? Number.NEGATIVE_INFINITY : t;
}

/** The shared tie-break: more recent first, then smaller id. */
export function compareRecency(a: { readonly id: string; readonly updatedAt: string }, b: { readonly id: string; readonly updatedAt: string }): number {
  const ta = timeOf(a.updatedAt);
  const tb = timeOf(b.updatedAt);
  if (ta !== tb) return ta > tb ? -1 : 1;
  if (a.updatedAt !== b.updatedAt) return a.updatedAt > b.updatedAt ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Orders ranked entries: score descending, then recency, then id. */
export function compareRanked<T extends { readonly id: string; readonly updatedAt: string }>(a: Ranked<T>, b: Ranked<T>): number {
  if (a.score !== b.score) return a.score > b.score ? -1 : 1;
  return compareRecency(a.item, b.item);
}

/**
 * BM25 scores of `docs` for `query`, computed over `docs` alone (so the
 * corpus a caller passes is the corpus scored: filter first). Documents
 * sharing no query token are left out. `limit` caps the answer.
 */
export function rankLexical<T extends RankDocument>(query: string, docs: readonly T[], options: LexicalOptions = {}): Ranked<T>[] {
  const k1 = options.k1 ?? 1.2;
  const b = options.b ?? 0.75;
  const terms = [...new Set(tokenize(query))];
  if (terms.length === 0 || docs.length === 0) return [];
  const counted = docs.map((doc) => {
    const stats = doc.stats ?? termStats(doc.text);
    return { doc, counts: stats.counts, length: stats.length };
  });
  const averageLength = counted.reduce((sum, c) => sum + c.length, 0) / counted.length || 1;
  const idf = new Map<string, number>();
  for (const term of terms) {
    const df = counted.filter((c) => c.counts.has(term)).length;
    idf.set(term, Math.log(1 + (counted.length - df + 0.5) / (df + 0.5)));
  }
  const ranked: Ranked<T>[] = [];
  for (const { doc, counts, length } of counted) {
    let score = 0;
    for (const term of terms) {
      const tf = counts.get(term) ?? 0;
      if (tf === 0) continue;
      score += (idf.get(term) ?? 0) * ((tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * length) / averageLength)));
    }
    if (score > 0) ranked.push({ item: doc, score });
  }
  ranked.sort(compareRanked);
  return options.limit === undefined ? ranked : ranked.slice(0, Math.max(0, options.limit));
}

/**
 * Reciprocal rank fusion: each list is a ranking (best first); an item's
 * fused score is the sum over the lists holding it of 1 / (k + rank), rank
 * counted from 1. An item is identified by id; the first occurrence's item is
 * kept. Ties break by recency, then id.
 */
export function fuseRrf<T extends { readonly id: string; readonly updatedAt: string }>(lists: readonly (readonly T[])[], k: number = RRF_K): Ranked<T>[] {
  if (!(k >= 0) || !Number.isFinite(k)) throw new RangeError("fuseRrf: k must be a finite number >= 0");
  const fused = new Map<string, { item: T; parts: number[] }>();
  for (const list of lists) {
    const seen = new Set<string>();
    list.forEach((item, index) => {
      if (seen.has(item.id)) return; // an id counts once per list, at its best rank
      seen.add(item.id);
      const entry = fused.get(item.id);
      const part = 1 / (k + index + 1);
      if (entry === undefined) fused.set(item.id, { item, parts: [part] });
      else entry.parts.push(part);
    });
  }
  // Summing the parts in one fixed order makes equal rank sets score exactly equal, whatever the list order.
  const scored = [...fused.values()].map(({ item, parts }) => ({ item, score: parts.sort((x, y) => x - y).reduce((sum, p) => sum + p, 0) }));
  return scored.sort(compareRanked);
}
