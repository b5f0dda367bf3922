// The BERT uncased tokenizer the native embedding model was trained with:
// text clean-up, spaces around CJK ideographs, whitespace split, lower case
// with accents stripped, punctuation split, then greedy longest-match
// WordPiece over the model's vocab.txt. Work is bounded: tokenizing stops as
// soon as the sequence limit is reached.

/** The special tokens of the vocabulary. */
const CLS = "[CLS]";
const SEP = "[SEP]";
const UNK = "[UNK]";
const PAD = "[PAD]";

/** A word longer than this (in code points) becomes one [UNK], as BERT's tokenizer does. */
const MAX_WORD_CHARS = 100;

export type WordPieceVocab = {
  readonly ids: ReadonlyMap<string, number>;
  readonly cls: number;
  readonly sep: number;
  readonly unk: number;
  readonly pad: number;
};

/** A tokenized text: token ids (with [CLS] and [SEP]) and whether the text was cut at the limit. */
export type Encoded = { readonly ids: number[]; readonly truncated: boolean };

/** Parses vocab.txt (one token a line, the line number is the id); null when a special token is missing. */
export function parseVocab(text: string): WordPieceVocab | null {
  const ids = new Map<string, number>();
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const token = (lines[i] ?? "").replace(/\r$/, "");
    if (token === "" && i === lines.length - 1) break;
    if (!ids.has(token)) ids.set(token, i);
  }
  const cls = ids.get(CLS);
  const sep = ids.get(SEP);
  const unk = ids.get(UNK);
  const pad = ids.get(PAD);
  if (cls === undefined || sep === undefined || unk === undefined || pad === undefined) return null;
  return { ids, cls, sep, unk, pad };
}

function isCjk(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) ||
    (cp >= 0x2b740 && cp <= 0x2b81f) ||
    (cp >= 0x2b820 && cp <= 0x2ceaf) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x2f800 && cp <= 0x2fa1f)
  );
}

const WHITESPACE = /^[\t\n\r \p{Zs}]$/u;
const CONTROL = /^\p{C}$/u;
const PUNCTUATION = /^\p{P}$/u;
const MARK = /\p{Mn}/gu;

function isPunctuation(ch: string, cp: number): boolean {
  // BERT counts every non-alphanumeric ASCII symbol as punctuation ($, +, ^, ...), plus Unicode P*.
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126)) return true;
  return PUNCTUATION.test(ch);
}

/**
 * Splits text into BERT's basic tokens (before WordPiece), calling `take` for
 * each; stops when `take` answers false. As BERT does: clean the text, put
 * spaces around CJK ideographs, split on whitespace, then lower-case each
 * chunk one character at a time (as the model's reference tokenizer does, so
 * a capital sigma becomes σ even at a word's end), strip its accents (NFD,
 * non-spacing marks dropped) and split it on punctuation.
 */
function basicTokens(text: string, take: (word: string) => boolean): void {
  let chunk = "";
  const flush = (): boolean => {
    if (chunk === "") return true;
    const done = Array.from(chunk, (c) => c.toLowerCase()).join("").normalize("NFD").replace(MARK, "");
    chunk = "";
    let word = "";
    for (const ch of done) {
      if (isPunctuation(ch, ch.codePointAt(0) ?? 0)) {
        if ((word !== "" && !take(word)) || !take(ch)) return false;
        word = "";
      } else {
        word += ch;
      }
    }
    return word === "" || take(word);
  };
  for (const raw of text) {
    const cp = raw.codePointAt(0) ?? 0;
    if (cp === 0 || cp === 0xfffd) continue;
    if (WHITESPACE.test(raw)) {
      if (!flush()) return;
      continue;
    }
    if (CONTROL.test(raw)) continue;
    if (isCjk(cp)) {
      // A compatibility ideograph decomposes to its unified form, which is what the vocabulary holds.
      if (!flush() || !take(raw.normalize("NFD"))) return;
      continue;
    }
    chunk += raw;
  }
  flush();
}

/** Greedy longest-match-first WordPiece of one basic token; the whole word is [UNK] when a piece is missing. */
function wordPieces(word: string, vocab: WordPieceVocab): number[] {
  const chars = Array.from(word);
  if (chars.length > MAX_WORD_CHARS) return [vocab.unk];
  const out: number[] = [];
  let start = 0;
  while (start < chars.length) {
    let end = chars.length;
    let found: number | undefined;
    while (start < end) {
      const piece = (start > 0 ? "##" : "") + chars.slice(start, end).join("");
      found = vocab.ids.get(piece);
      if (found !== undefined) break;
      end--;
    }
    if (found === undefined) return [vocab.unk];
    out.push(found);
    start = end;
  }
  return out;
}

/**
 * Tokenizes one text into ids: [CLS] pieces... [SEP], at most `maxTokens`
 * ids in all (the pieces are cut to fit, as the model's own truncation does).
 */
export function encode(text: string, vocab: WordPieceVocab, maxTokens: number): Encoded {
  const room = Math.max(0, maxTokens - 2);
  const ids: number[] = [vocab.cls];
  let truncated = false;
  basicTokens(text, (word) => {
    for (const id of wordPieces(word, vocab)) {
      if (ids.length - 1 >= room) {
        truncated = true;
        return false;
      }
      ids.push(id);
    }
    return true;
  });
  ids.push(vocab.sep);
  return { ids, truncated };
}

/** The tokens of `ids` as strings (for tests and diagnostics). */
export function idsToTokens(ids: readonly number[], vocab: WordPieceVocab): string[] {
  const byId = new Map<number, string>();
  for (const [token, id] of vocab.ids) byId.set(id, token);
  return ids.map((id) => byId.get(id) ?? UNK);
}
