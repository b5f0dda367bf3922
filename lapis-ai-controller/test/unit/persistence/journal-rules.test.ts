// The flat facts texts (journal-rules.ts FLAT_METADATA_TEXT, FLAT_RECEIPT_TEXT) let startup validation accept a metadata or
// receipt text without JSON.parse. They must imply the rules: every text they match parses to a value validMetadata
// (validReceipt) accepts. Texts they do not match are judged by JSON.parse and the rule, so they need not match every valid one.
import assert from "node:assert/strict";
import { test } from "node:test";
import { FLAT_METADATA_TEXT, FLAT_RECEIPT_TEXT, RECEIPT_CONTENT_KEYS, validMetadata, validReceipt } from "../../../src/persistence/journal-rules.ts";

function ruleOf(text: string, rule: (value: unknown) => boolean): boolean {
  try {
    return rule(JSON.parse(text));
  } catch {
    return false;
  }
}

const RECEIPT = JSON.stringify({ commandId: "cmd-1", turnId: "turn-1", threadId: "thread-1", state: "queued", n: 7, ok: true, none: null });
const MATCHED = ["{}", RECEIPT, `{"a":"${"x".repeat(256)}"}`, `{"a":-0,"b":123456789012345}`, `{"a":1,"a":"b"}`,
  JSON.stringify(Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`k${i}`, i])))];
const NOT_MATCHED = [
  `{"a":"${"x".repeat(257)}"}`, `{"a":1234567890123456}`, `{"a":1.5}`, `{"a":1e400}`, `{"a":"\\u0000"}`, `{"a":"say \\"hi\\""}`,
  `{"a":"é"}`, `{"a":"x\u0000"}`, `{"a":1}\u0000`, `{ "a":1}`, `{"a":[1]}`, `{"a":{"b":1}}`, `{"9a":1}`, `{"__proto__":1}`, `{"a":01}`,
  `{"a":1,}`, `{,}`, `[]`, `null`, `{"a":1}x`, `{"a":1}\n`, `{"a":true,"b":nul}`,
  JSON.stringify(Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, i]))),
];

test("P-STO-06 the flat metadata text implies validMetadata, and these cases go to JSON.parse", () => {
  for (const text of MATCHED) {
    assert.equal(FLAT_METADATA_TEXT.test(text), true, text);
    assert.equal(ruleOf(text, validMetadata), true, text);
  }
  for (const text of NOT_MATCHED) assert.equal(FLAT_METADATA_TEXT.test(text), false, text);
});

test("P-STO-06 the flat receipt text implies validReceipt: no content-named key", () => {
  for (const text of MATCHED) assert.equal(FLAT_RECEIPT_TEXT.test(text), ruleOf(text, validReceipt), text);
  for (const key of RECEIPT_CONTENT_KEYS) {
    const text = JSON.stringify({ commandId: "cmd-1", [key]: "x" });
    assert.equal(FLAT_RECEIPT_TEXT.test(text), false, text);
    assert.equal(ruleOf(text, validReceipt), false, text);
    assert.equal(FLAT_RECEIPT_TEXT.test(JSON.stringify({ [`${key}s`]: "x", [`x${key}`]: 1 })), true, key);
  }
});

/** A deterministic generator (xorshift32), so a failure names a reproducible text. */
function generator(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    return x / 2 ** 32;
  };
}

test("P-STO-06 every generated text the flat patterns match satisfies the rules (20,000 texts near the boundary)", () => {
  const random = generator(0x5eed1234);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const keys = ["a", "messageId", "Z9_", "9a", "_a", "a-b", "", "k".repeat(64), "k".repeat(65), ...RECEIPT_CONTENT_KEYS, "__proto__", "a\"b"];
  const chars = ["a", " ", "~", "\"", "\\", "\\\"", "\\n", "\\u0000", "\u0000", "\u0001", "é", "\u007f", "\uD800"];
  const values = () => pick([
    () => `"${Array.from({ length: pick([0, 1, 5, 255, 256, 257]) }, () => random() < 0.97 ? "x" : pick(chars)).join("")}"`,
    () => pick(["0", "-0", "7", "-12", "123456789012345", "1234567890123456", "01", "1.0", "1e3", "-", "1e400", "NaN"]),
    () => pick(["true", "false", "null", "nul", "[]", "{}", "[1]", "{\"a\":1}"]),
  ])();
  let matched = 0;
  for (let i = 0; i < 20_000; i++) {
    const entries = Array.from({ length: pick([0, 1, 2, 3, 31, 32, 33]) }, () => `"${pick(keys)}"${pick([":", ":", ":", " : "])}${values()}`);
    const text = `${pick(["{", "{", "{", " {"])}${entries.join(pick([",", ",", ",", ", "]))}${pick(["}", "}", "}", "} ", ",}"])}`;
    if (FLAT_METADATA_TEXT.test(text)) {
      matched += 1;
      assert.equal(ruleOf(text, validMetadata), true, text);
    }
    if (FLAT_RECEIPT_TEXT.test(text)) assert.equal(ruleOf(text, validReceipt), true, text);
  }
  assert.ok(matched > 1_000, `the generator reaches matching texts (${matched})`);
});
