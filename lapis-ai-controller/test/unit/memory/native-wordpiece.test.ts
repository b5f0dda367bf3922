// The native embedding provider's tokenizer (P-MEM-08): BERT's uncased basic
// tokenizer and WordPiece, over a small vocabulary written here, so each
// expected token is visible in the test; then over the model's real
// vocabulary against ids the model's own reference tokenizer produced
// (test/fixtures/native-tokenizer-reference.json).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { encode, idsToTokens, parseVocab, type WordPieceVocab } from "../../../src/memory/native/wordpiece.ts";
import { nativeModelDir } from "../../support/native-model.ts";

const TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", ",", "!", ".", "$", "5", "00", "un", "##aff", "##able",
  "cafe", "naive", "中", "文", "\u8c48", "play", "##ing", "##s", "a", "b", "-", "'", "it", "s", "é", "\u03bf\u03b4\u03bf\u03c3", "\u03c3\u03bf\u03c6\u03bf\u03c3"];
const VOCAB = parseVocab(TOKENS.join("\n") + "\n") as WordPieceVocab;
const tokens = (text: string, max = 64) => idsToTokens(encode(text, VOCAB, max).ids, VOCAB);

test("P-MEM-08 native tokenizer: parseVocab takes line numbers as ids and needs the special tokens", () => {
  assert.equal(VOCAB.ids.get("hello"), 5);
  assert.deepEqual([VOCAB.pad, VOCAB.unk, VOCAB.cls, VOCAB.sep], [0, 1, 2, 3]);
  assert.equal(parseVocab("hello\nworld\n"), null);
  assert.equal(parseVocab("[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\nx\r\n")?.ids.get("x"), 4, "CRLF lines");
});

test("P-MEM-08 native tokenizer: lower case, accents stripped, punctuation split, [CLS] and [SEP] around", () => {
  assert.deepEqual(tokens("Hello, WORLD!"), ["[CLS]", "hello", ",", "world", "!", "[SEP]"]);
  assert.deepEqual(tokens("Café naïve"), ["[CLS]", "cafe", "naive", "[SEP]"]);
  assert.deepEqual(tokens("$5.00"), ["[CLS]", "$", "5", ".", "00", "[SEP]"]);
  assert.deepEqual(tokens("it's a-b"), ["[CLS]", "it", "'", "s", "a", "-", "b", "[SEP]"]);
  assert.deepEqual(tokens(""), ["[CLS]", "[SEP]"]);
  // Lower-cased one character at a time, as the model's reference tokenizer does: no final-sigma form.
  assert.deepEqual(tokens("\u039f\u0394\u039f\u03a3 \u03a3\u039f\u03a6\u039f\u03a3!"), ["[CLS]", "\u03bf\u03b4\u03bf\u03c3", "\u03c3\u03bf\u03c6\u03bf\u03c3", "!", "[SEP]"]);
});

test("P-MEM-08 native tokenizer: whitespace and control characters separate or vanish", () => {
  assert.deepEqual(tokens(" hello\t\nworld\u00a0hello\u3000world "), ["[CLS]", "hello", "world", "hello", "world", "[SEP]"]);
  assert.deepEqual(tokens("hel\u0000lo wor\u200bld \ufffd"), ["[CLS]", "hello", "world", "[SEP]"], "NUL, format characters and U+FFFD are dropped");
});

test("P-MEM-08 native tokenizer: CJK ideographs are single tokens; compatibility ideographs map to their unified form", () => {
  assert.deepEqual(tokens("hello中文world"), ["[CLS]", "hello", "中", "文", "world", "[SEP]"]);
  assert.deepEqual(tokens("\uf900"), ["[CLS]", "\u8c48", "[SEP]"], "U+F900 decomposes to U+8C48, which the vocabulary holds");
  assert.deepEqual(tokens("\ufa1f"), ["[CLS]", "[UNK]", "[SEP]"], "an ideograph missing from the vocabulary is [UNK]");
});

test("P-MEM-08 native tokenizer: WordPiece greedy longest match; an unknown piece makes the whole word [UNK]", () => {
  assert.deepEqual(tokens("unaffable"), ["[CLS]", "un", "##aff", "##able", "[SEP]"]);
  assert.deepEqual(tokens("playings plays"), ["[CLS]", "play", "##ing", "##s", "play", "##s", "[SEP]"]);
  assert.deepEqual(tokens("playx hello"), ["[CLS]", "[UNK]", "hello", "[SEP]"]);
  assert.deepEqual(tokens("a".repeat(101)), ["[CLS]", "[UNK]", "[SEP]"], "a word over 100 characters is one [UNK]");
});

test("P-MEM-08 native tokenizer: truncation keeps [CLS] first pieces [SEP] within the limit, and says so", () => {
  const long = Array.from({ length: 50 }, () => "hello world").join(" ");
  const cut = encode(long, VOCAB, 8);
  assert.equal(cut.ids.length, 8);
  assert.equal(cut.truncated, true);
  assert.deepEqual(idsToTokens(cut.ids, VOCAB), ["[CLS]", "hello", "world", "hello", "world", "hello", "world", "[SEP]"]);
  const pieces = encode("unaffable hello", VOCAB, 4);
  assert.deepEqual(idsToTokens(pieces.ids, VOCAB), ["[CLS]", "un", "##aff", "[SEP]"], "a word's pieces are cut too");
  assert.equal(encode("hello world", VOCAB, 4).truncated, false, "exactly at the limit is not truncated");
  assert.equal(encode("hello world", VOCAB, 2).ids.length, 2);
});

test("P-MEM-08 native tokenizer: the model's real vocabulary gives exactly the reference tokenizer's ids (scripts, accents, emoji, controls, truncation)", () => {
  const vocab = parseVocab(readFileSync(join(nativeModelDir(), "vocab.txt"), "utf8"));
  assert.ok(vocab !== null);
  assert.equal(vocab.ids.size, 30522);
  const reference = JSON.parse(readFileSync(join(import.meta.dirname, "..", "..", "fixtures", "native-tokenizer-reference.json"), "utf8")) as {
    cases: { text: string; ids: number[]; maxTokens?: number }[];
  };
  assert.ok(reference.cases.length >= 30);
  for (const { text, ids, maxTokens } of reference.cases) {
    assert.deepEqual(encode(text, vocab, maxTokens ?? 100_000).ids, ids, JSON.stringify(text).slice(0, 80));
  }
});
