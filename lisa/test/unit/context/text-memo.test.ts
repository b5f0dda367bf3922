import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { TextMemo } from "../../../src/context/text-memo.ts";

function counting(): { convert: (input: string) => string; calls: string[] } {
  const calls: string[] = [];
  return { calls, convert: (input) => (calls.push(input), input.toUpperCase()) };
}

describe("bounded memo of formatted-body conversions", () => {
  test("converts a repeated input once and returns the same text", () => {
    const c = counting();
    const memo = new TextMemo(c.convert, { maxEntries: 4, maxCharacters: 1_000 });
    assert.equal(memo.get("<b>a</b>"), "<B>A</B>");
    assert.equal(memo.get("<b>a</b>"), "<B>A</B>");
    assert.deepEqual(c.calls, ["<b>a</b>"]);
  });

  test("keeps at most maxEntries, forgetting the least recently used", () => {
    const c = counting();
    const memo = new TextMemo(c.convert, { maxEntries: 2, maxCharacters: 1_000 });
    memo.get("a");
    memo.get("b");
    memo.get("a"); // a is now the most recent
    memo.get("c"); // evicts b
    assert.equal(memo.size, 2);
    memo.get("a");
    memo.get("b");
    assert.deepEqual(c.calls, ["a", "b", "c", "b"]);
  });

  test("keeps input and output characters within maxCharacters", () => {
    const c = counting();
    const memo = new TextMemo(c.convert, { maxEntries: 100, maxCharacters: 80 });
    for (const word of ["aaaaa", "bbbbb", "ccccc", "ddddd", "eeeee", "fffff", "ggggg", "hhhhh", "iiiii"]) memo.get(word);
    assert.equal(memo.size, 8, "9 entries of 10 characters each exceed 80");
    memo.get("aaaaa");
    assert.equal(c.calls.filter((x) => x === "aaaaa").length, 2, "the oldest entry was forgotten");
  });

  test("never stores an input too large for its share of the budget", () => {
    const c = counting();
    const memo = new TextMemo(c.convert, { maxEntries: 100, maxCharacters: 80 });
    const large = "x".repeat(6);
    assert.equal(memo.get(large), "XXXXXX");
    assert.equal(memo.get(large), "XXXXXX");
    assert.equal(memo.size, 0);
    assert.equal(c.calls.length, 2);
  });
});
